#!/usr/bin/env python3
"""Cyclone DDS liveliness peer for FerroDDS's liveliness tests (PyPI cyclonedds 11.0.1).

  cyclone_liveliness.py write --domain D --topic T --kind KIND --lease-ms L --phases P
      A writer of live::Beat with LIVELINESS KIND (automatic, manual_by_participant,
      manual_by_topic) and lease L. P is a comma-separated list of phases, each
      "write:SECONDS" (a sample every 100 ms), "idle:SECONDS" (nothing written, the process
      alive) or "assert:SECONDS" (no data; the writer asserts its liveliness every 100 ms).
      Prints {"phase": NAME, "index": I} as each phase starts and {"phase": "end"} at the
      end. Waits up to 20 s for a reader first.

  cyclone_liveliness.py watch --domain D --topic T --seconds S
      A reader of live::Beat (default LIVELINESS: automatic, infinite lease). Prints
      {"t": SECONDS_SINCE_MATCH, "alive": A, "not_alive": N} every 50 ms for S seconds after
      the first writer matched (waits up to 20 s for it).

Exit codes: 0 success, 2 nothing matched in time, 4 bad usage.
"""

import ctypes
import json
import sys
import time
from dataclasses import dataclass

from cyclone_env import Parser, pin_to_loopback

pin_to_loopback()

from cyclonedds.core import Policy, Qos  # noqa: E402
from cyclonedds.domain import DomainParticipant  # noqa: E402
from cyclonedds.idl import IdlStruct  # noqa: E402
from cyclonedds.idl.annotations import key  # noqa: E402
from cyclonedds.idl.types import int32  # noqa: E402
from cyclonedds.pub import DataWriter  # noqa: E402
from cyclonedds.sub import DataReader  # noqa: E402
from cyclonedds.topic import Topic  # noqa: E402
from cyclonedds.util import duration  # noqa: E402


@dataclass
class Beat(IdlStruct, typename="live::Beat"):
    id: int32
    key("id")
    count: int32


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def liveliness(kind, lease_ms):
    lease = duration(milliseconds=lease_ms)
    return {
        "automatic": Policy.Liveliness.Automatic,
        "manual_by_participant": Policy.Liveliness.ManualByParticipant,
        "manual_by_topic": Policy.Liveliness.ManualByTopic,
    }[kind](lease)


def assert_liveliness(entity):
    """Cyclone's ``dds_assert_liveliness``: cyclonedds-python 11.0.1 has no wrapper for it,
    so it is called through the package's own handle on the Cyclone library."""
    rc = entity._dll_handle.dds_assert_liveliness(ctypes.c_int32(entity._ref))
    if rc != 0:
        raise RuntimeError(f"dds_assert_liveliness returned {rc}")


def wait_for(cond, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.02)
    return False


def run_write(a):
    dp = DomainParticipant(a.domain)
    topic = Topic(dp, a.topic, Beat)
    qos = Qos(Policy.Reliability.Reliable(duration(seconds=1)), liveliness(a.kind, a.lease_ms))
    writer = DataWriter(dp, topic, qos=qos)
    if not wait_for(lambda: writer.get_publication_matched_status().current_count > 0, 20):
        sys.stderr.write("cyclone_liveliness: no reader matched\n")
        return 2
    count = 0
    for index, phase in enumerate(a.phases.split(",")):
        name, seconds = phase.split(":")
        emit({"phase": name, "index": index})
        end = time.monotonic() + float(seconds)
        while time.monotonic() < end:
            if name == "write":
                count += 1
                writer.write(Beat(id=1, count=count))
            elif name == "assert":
                assert_liveliness(writer)
            time.sleep(0.1)
    emit({"phase": "end"})
    return 0


def run_watch(a):
    dp = DomainParticipant(a.domain)
    topic = Topic(dp, a.topic, Beat)
    reader = DataReader(dp, topic, qos=Qos(Policy.Reliability.Reliable(duration(seconds=1))))
    if not wait_for(lambda: reader.get_subscription_matched_status().current_count > 0, 20):
        sys.stderr.write("cyclone_liveliness: no writer matched\n")
        return 2
    start = time.monotonic()
    while time.monotonic() - start < a.seconds:
        s = reader.get_liveliness_changed_status()
        reader.take(N=100)
        emit({"t": round(time.monotonic() - start, 3), "alive": s.alive_count,
              "not_alive": s.not_alive_count})
        time.sleep(0.05)
    return 0


def main():
    p = Parser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="mode", required=True)
    w = sub.add_parser("write")
    w.add_argument("--domain", type=int, required=True)
    w.add_argument("--topic", required=True)
    w.add_argument("--kind", choices=["automatic", "manual_by_participant", "manual_by_topic"],
                   required=True)
    w.add_argument("--lease-ms", type=int, required=True)
    w.add_argument("--phases", required=True)
    r = sub.add_parser("watch")
    r.add_argument("--domain", type=int, required=True)
    r.add_argument("--topic", required=True)
    r.add_argument("--seconds", type=float, required=True)
    a = p.parse_args()
    return run_write(a) if a.mode == "write" else run_watch(a)


if __name__ == "__main__":
    sys.exit(main())
