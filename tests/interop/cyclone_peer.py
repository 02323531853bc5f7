#!/usr/bin/env python3
"""Cyclone DDS peer for FerroDDS end-to-end interop tests.

A small publisher/subscriber built on PyPI's ``cyclonedds`` (tested with 11.0.1).
See README.md next to this file for the CLI and the JSON line formats.

Exit codes:
  0  success
  1  sub: timed out before receiving what was expected (one line on stderr)
  2  pub: no reader matched within --wait-match seconds (one line on stderr)
  3  pub: --require-acks given and the writer's data was not acknowledged in time
  4  bad usage / DDS error (one line on stderr)
"""

import argparse
import base64
import hashlib
import json
import os
import sys
import time

# Pin Cyclone to loopback unless the caller configured it (CYCLONEDDS_URI set and
# non-empty). Done below, after argument parsing but before cyclonedds is imported.
DEFAULT_URI = (
    '<CycloneDDS><Domain id="any"><General><Interfaces>'
    '<NetworkInterface name="lo" multicast="true"/></Interfaces>'
    '<AllowMulticast>spdp</AllowMulticast></General></Domain></CycloneDDS>'
)

READING_BASE_STAMP = 1_700_000_000_000


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # usage errors exit 4 (argparse's 2 means "no match" here)
        self.print_usage(sys.stderr)
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        sys.exit(4)


def parse_args(argv=None):
    p = _Parser(
        description="Cyclone DDS interop peer (pub/sub of interop::Reading / interop::Blob)")
    sub = p.add_subparsers(dest="mode", required=True)

    def common(sp):
        sp.add_argument("--domain", type=int, default=0, help="DDS domain id (default 0)")
        sp.add_argument("--topic", required=True, help="topic name")
        sp.add_argument("--type", dest="type", choices=["reading", "blob"], required=True)
        sp.add_argument("--count", type=int, required=True, help="number of samples to write / to expect")
        rel = sp.add_mutually_exclusive_group()
        rel.add_argument("--reliable", dest="reliable", action="store_true", default=True,
                         help="RELIABLE reliability (default)")
        rel.add_argument("--best-effort", dest="reliable", action="store_false",
                         help="BEST_EFFORT reliability")
        sp.add_argument("--transient-local", action="store_true",
                        help="TRANSIENT_LOCAL durability (default VOLATILE)")
        hist = sp.add_mutually_exclusive_group()
        hist.add_argument("--history-depth", type=int, default=None, metavar="K",
                          help="KEEP_LAST(K) history")
        hist.add_argument("--keep-all", action="store_true",
                          help="KEEP_ALL history (the default when --history-depth is not given)")
        sp.add_argument("--verbose", "-v", action="store_true",
                        help="progress and timings on stderr")
        sp.add_argument("--trace", metavar="FILE", default=None,
                        help="write a Cyclone 'finest' trace to FILE (only when CYCLONEDDS_URI is not set)")

    sp = sub.add_parser("pub", help="write samples")
    common(sp)
    sp.add_argument("--dispose", type=int, default=None, metavar="ID",
                    help="after writing, dispose the instance with this key")
    sp.add_argument("--blob-size", type=int, default=1024, metavar="BYTES",
                    help="size of Blob.data (default 1024)")
    sp.add_argument("--wait-match", type=float, default=10.0, metavar="SECONDS",
                    help="wait up to this long for a matched reader before writing (default 10)")
    sp.add_argument("--no-wait-match", action="store_true",
                    help="write immediately, without waiting for a matched reader")
    sp.add_argument("--settle", type=float, default=0.0, metavar="SECONDS",
                    help="sleep this long after the match before writing (default 0). The writer "
                         "seeing the reader does not mean the reader has seen the writer yet; "
                         "best-effort samples sent in that window are dropped by the reader")
    sp.add_argument("--linger", type=float, default=1.0, metavar="SECONDS",
                    help="stay alive this long after writing (and acks) before exiting (default 1)")
    sp.add_argument("--period-ms", type=float, default=0.0, metavar="MS",
                    help="sleep between writes (default 0)")
    sp.add_argument("--ack-timeout", type=float, default=30.0, metavar="SECONDS",
                    help="reliable only: bound on waiting for acknowledgments (default 30)")
    sp.add_argument("--require-acks", action="store_true",
                    help="exit 3 if the acknowledgment wait times out")
    sp.add_argument("--max-blocking-time", type=float, default=30.0, metavar="SECONDS",
                    help="reliable max_blocking_time of the writer (default 30)")
    sp.add_argument("--autodispose", action="store_true",
                    help="WriterDataLifecycle autodispose_unregistered_instances=TRUE (the DDS default). "
                         "Off by default here, so that exiting does not dispose every instance and "
                         "only --dispose produces NOT_ALIVE_DISPOSED; on exit readers see "
                         "NOT_ALIVE_NO_WRITERS instead")

    sp = sub.add_parser("sub", help="take samples")
    common(sp)
    sp.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                    help="give up after this long (exit 1) (default 30)")
    sp.add_argument("--expect-dispose", action="store_true",
                    help="also require a sample with instance_state NOT_ALIVE_DISPOSED")
    a = p.parse_args(argv)
    if a.count < 0:
        p.error("--count must be >= 0")
    if a.history_depth is not None and a.history_depth < 1:
        p.error("--history-depth must be >= 1")
    if a.mode == "pub" and a.blob_size < 0:
        p.error("--blob-size must be >= 0")
    return a


ARGS = parse_args()

if not os.environ.get("CYCLONEDDS_URI"):
    uri = DEFAULT_URI
    if ARGS.trace:
        tracing = ('<Tracing><Verbosity>finest</Verbosity><OutputFile>%s</OutputFile></Tracing>'
                   % ARGS.trace.replace("&", "&amp;").replace("<", "&lt;"))
        uri = uri.replace("</Domain>", tracing + "</Domain>")
    os.environ["CYCLONEDDS_URI"] = uri

from dataclasses import dataclass  # noqa: E402

from cyclonedds.core import DDSException, InstanceState, ReadCondition, SampleState, ViewState, WaitSet  # noqa: E402
from cyclonedds.domain import DomainParticipant  # noqa: E402
from cyclonedds.idl import IdlStruct  # noqa: E402
from cyclonedds.idl.annotations import appendable, final, key  # noqa: E402
from cyclonedds.idl.types import float64, int32, int64, sequence, uint8  # noqa: E402
from cyclonedds.pub import DataWriter  # noqa: E402
from cyclonedds.qos import Policy, Qos  # noqa: E402
from cyclonedds.sub import DataReader  # noqa: E402
from cyclonedds.topic import Topic  # noqa: E402
from cyclonedds.util import duration  # noqa: E402


# ---------------------------------------------------------------- types ----
# typename "interop.X" is turned into "interop::X" on the wire by cyclonedds.

@final
@dataclass
class Position(IdlStruct, typename="interop.Position"):
    x: float64
    y: float64
    z: float64


@appendable
@dataclass
class Reading(IdlStruct, typename="interop.Reading"):
    sensor_id: int32
    key("sensor_id")
    name: str
    key("name")
    unit: str
    pos: Position
    values: sequence[float64]
    blob: sequence[uint8]
    stamp: int64


@appendable
@dataclass
class Blob(IdlStruct, typename="interop.Blob"):
    id: int32
    key("id")
    data: sequence[uint8]


TYPES = {"reading": Reading, "blob": Blob}


def _install_octet_sequence_fast_path():
    """Serialize bytes-valued sequence<uint8> members with one memcpy.

    cyclonedds 11.0.1 serializes sequence<uint8> as struct.pack("<nB", *value): ~2 s and
    ~700 MB of RSS for 16 MiB. When the value is already bytes-like, write the identical
    encoding (uint32 length + raw octets) directly. Lists of ints take the stock path;
    deserialization is untouched (it yields a list of ints).
    """
    try:
        from cyclonedds.idl._machinery import PlainCdrV2SequenceOfPrimitiveMachine as M
    except ImportError:  # different cyclonedds layout: keep the slow but correct path
        return
    stock = M.serialize

    def serialize(self, buffer, value, *args, **kwargs):
        if self.size == 1 and isinstance(value, (bytes, bytearray, memoryview)):
            assert self.max_length is None or len(value) <= self.max_length
            buffer.align(4)
            buffer.write('I', 4, len(value))
            buffer.write_bytes(value)
            return
        return stock(self, buffer, value, *args, **kwargs)

    M.serialize = serialize


_install_octet_sequence_fast_path()


# ------------------------------------------------------- sample contents ----

def make_reading(i):
    return Reading(
        sensor_id=i % 3,
        name=f"sensor-{i % 3}",
        unit="\u00b0C",
        pos=Position(x=float(i), y=float(-i), z=0.5 * i),
        values=[i * 0.25 for _ in range(i % 5)],
        blob=list(bytes((i * 7 + k) % 256 for k in range(i % 11))),
        stamp=READING_BASE_STAMP + i,
    )


def blob_bytes(i, size):
    """data[k] = (k*31 + i) % 256; period 256 in k, so build one period and repeat."""
    period = bytes((k * 31 + i) % 256 for k in range(256))
    reps, rest = divmod(size, 256)
    return period * reps + period[:rest]


def reading_key(sensor_id):
    return Reading(sensor_id=sensor_id, name=f"sensor-{sensor_id}", unit="",
                   pos=Position(0.0, 0.0, 0.0), values=[], blob=[], stamp=0)


def blob_key(id_):
    return Blob(id=id_, data=[])


# ------------------------------------------------------------------ JSON ----

def position_json(p):
    return {"x": p.x, "y": p.y, "z": p.z}


def reading_json(s):
    return {
        "sensor_id": s.sensor_id,
        "name": s.name,
        "unit": s.unit,
        "pos": position_json(s.pos),
        "values": list(s.values),
        "blob": base64.b64encode(bytes(s.blob)).decode("ascii"),  # as the JSON view has octets
        "stamp": s.stamp,
    }


def blob_json(s):
    data = bytes(s.data)
    return {"id": s.id, "len": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def key_json(type_name, s):
    if s is None:
        return None
    if type_name == "reading":
        return {"sensor_id": s.sensor_id, "name": s.name}
    return {"id": s.id}


INSTANCE_STATES = {
    InstanceState.Alive: "ALIVE",
    InstanceState.NotAliveDisposed: "NOT_ALIVE_DISPOSED",
    InstanceState.NotAliveNoWriters: "NOT_ALIVE_NO_WRITERS",
}


def emit(obj):
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, separators=(", ", ": ")) + "\n")
    sys.stdout.flush()


T0 = time.monotonic()


def log(msg):
    if ARGS.verbose:
        sys.stderr.write(f"cyclone_peer: [{time.monotonic() - T0:7.3f}s] {msg}\n")
        sys.stderr.flush()


def fail(code, msg):
    sys.stderr.write(f"cyclone_peer: {msg}\n")
    sys.stderr.flush()
    sys.stdout.flush()
    # os._exit: skip interpreter teardown of DDS entities, we are bailing out anyway.
    os._exit(code)


# ------------------------------------------------------------------- QoS ----

def history_policy(a):
    if a.history_depth is not None:
        return Policy.History.KeepLast(a.history_depth)
    return Policy.History.KeepAll


def build_qos(a, writer):
    policies = []
    if a.reliable:
        mbt = duration(seconds=a.max_blocking_time) if writer else duration(milliseconds=100)
        policies.append(Policy.Reliability.Reliable(max_blocking_time=mbt))
    else:
        policies.append(Policy.Reliability.BestEffort)
    hist = history_policy(a)
    policies.append(hist)
    if a.transient_local:
        policies.append(Policy.Durability.TransientLocal)
        if writer:
            # Cyclone keeps data for late joiners according to DurabilityService.history
            # (default KEEP_LAST 1); make it follow the writer history.
            policies.append(Policy.DurabilityService(
                cleanup_delay=0, history=hist, max_samples=-1, max_instances=-1,
                max_samples_per_instance=-1))
    else:
        policies.append(Policy.Durability.Volatile)
    if writer:
        policies.append(Policy.WriterDataLifecycle(autodispose=a.autodispose))
    return Qos(*policies)


def create_participant(domain):
    """DomainParticipant(domain), retried for a few seconds on failure.

    The domain's fixed discovery ports (7400 + 250*domain + {0,1}) lie inside Linux's
    ephemeral range (32768-60999) for domain ids >= 102. When another process (e.g. a
    peer of a parallel test) happens to hold one of them as its ephemeral port, Cyclone
    fails with "ddsi_udp_create_conn: failed to bind to ANY:<port>: address in use".
    Such holders are usually short-lived, so retry.
    """
    deadline = time.monotonic() + 10.0
    attempt = 0
    while True:
        attempt += 1
        try:
            return DomainParticipant(domain)
        except DDSException as e:
            if time.monotonic() >= deadline:
                raise
            sys.stderr.write(f"cyclone_peer: creating participant on domain {domain} failed "
                             f"(attempt {attempt}: {e}); retrying\n")
            sys.stderr.flush()
            time.sleep(0.5)


# ------------------------------------------------------------------- pub ----

def run_pub(a):
    dp = create_participant(a.domain)
    topic = Topic(dp, a.topic, TYPES[a.type])
    writer = DataWriter(dp, topic, qos=build_qos(a, writer=True))

    if not a.no_wait_match:
        deadline = time.monotonic() + a.wait_match
        while writer.get_publication_matched_status().current_count < 1:
            if time.monotonic() >= deadline:
                fail(2, f"no matched reader on domain {a.domain} topic {a.topic!r} "
                        f"after {a.wait_match:g} s")
            time.sleep(0.02)
        log("reader matched")
    if a.settle > 0:
        time.sleep(a.settle)

    t_write = time.monotonic()
    for i in range(a.count):
        if i and a.period_ms > 0:
            time.sleep(a.period_ms / 1000.0)
        if a.type == "reading":
            s = make_reading(i)
            writer.write(s)
            emit({"written": i, "sample": reading_json(s)})
        else:
            data = blob_bytes(i, a.blob_size)
            # The CDR machinery packs with struct.pack("<nB", *value), so a bytes
            # object works as well as a list of ints and is much cheaper.
            writer.write(Blob(id=i, data=data))
            digest = hashlib.sha256(data).hexdigest()
            emit({"written": i, "sha256": digest,
                  "sample": {"id": i, "len": len(data), "sha256": digest}})

    if a.dispose is not None:
        k = reading_key(a.dispose) if a.type == "reading" else blob_key(a.dispose)
        writer.dispose(k)
        emit({"disposed": key_json(a.type, k)})

    log(f"wrote {a.count} samples in {time.monotonic() - t_write:.3f}s")
    acked = None
    if a.reliable:
        t_ack = time.monotonic()
        acked = writer.wait_for_acks(duration(seconds=a.ack_timeout))
        log(f"wait_for_acks -> {acked} after {time.monotonic() - t_ack:.3f}s")
        if not acked:
            sys.stderr.write(f"cyclone_peer: warning: not all data acknowledged within "
                             f"{a.ack_timeout:g} s\n")
            sys.stderr.flush()

    if a.linger > 0:
        time.sleep(a.linger)
    emit({"done": True, "acked": acked})
    if a.require_acks and acked is False:
        return 3
    return 0


# ------------------------------------------------------------------- sub ----

def run_sub(a):
    dp = create_participant(a.domain)
    topic = Topic(dp, a.topic, TYPES[a.type])
    reader = DataReader(dp, topic, qos=build_qos(a, writer=False))
    cond = ReadCondition(reader, SampleState.Any | ViewState.Any | InstanceState.Any)
    ws = WaitSet(dp)
    ws.attach(cond)
    log("reader created")

    to_json = reading_json if a.type == "reading" else blob_json
    valid = 0
    invalid = 0
    seen_dispose = False
    deadline = time.monotonic() + a.timeout

    def satisfied():
        return valid >= a.count and (seen_dispose or not a.expect_dispose)

    while not satisfied():
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            what = f"{valid}/{a.count} valid samples"
            if a.expect_dispose:
                what += ", dispose " + ("seen" if seen_dispose else "NOT seen")
            fail(1, f"timeout after {a.timeout:g} s on domain {a.domain} topic {a.topic!r}: "
                    f"got {what} ({invalid} invalid-data samples)")
        ws.wait(duration(seconds=min(remaining, 0.2)))
        # Cyclone returns what it holds grouped by instance, so take everything it holds
        # before restoring write order (source timestamps of one writer increase):
        # sorting a partial take would put a later sample of one instance before an
        # earlier one of another that stayed behind. (Bounded: each round takes at least
        # one sample, and the writer stops.)
        batch = []
        while True:
            more = reader.take(N=256)
            if not more:
                break
            batch.extend(more)
        batch.sort(key=lambda x: x.sample_info.source_timestamp)
        if batch:
            log(f"took {len(batch)} samples")
        for s in batch:
            info = s.sample_info
            state = INSTANCE_STATES.get(info.instance_state, str(info.instance_state))
            if info.instance_state == InstanceState.NotAliveDisposed:
                seen_dispose = True
            if info.valid_data:
                valid += 1
                emit({"valid_data": True, "instance_state": state, "sample": to_json(s)})
            else:
                invalid += 1
                emit({"valid_data": False, "instance_state": state,
                      "sample": key_json(a.type, getattr(s, "key_sample", None))})
    sys.stderr.write(f"cyclone_peer: sub done: {valid} valid, {invalid} invalid-data samples\n")
    sys.stderr.flush()
    return 0


def main():
    try:
        rc = run_pub(ARGS) if ARGS.mode == "pub" else run_sub(ARGS)
    except DDSException as e:
        fail(4, f"DDS error: {e}")
    sys.stdout.flush()
    sys.stderr.flush()
    return rc


if __name__ == "__main__":
    sys.stdout.reconfigure(encoding="utf-8")
    sys.exit(main())
