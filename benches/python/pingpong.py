"""One side of the Python benchmark (benches/matrix.py runs pairs of these).

    pingpong.py pong BACKEND DOMAIN [SIZE]
    pingpong.py ping BACKEND DOMAIN INSTANCES SAMPLES_PER_INSTANCE SIZE
    pingpong.py sub  BACKEND DOMAIN COUNT
    pingpong.py pub  BACKEND DOMAIN COUNT SIZE

BACKEND: ``ferrodds`` (samples as IdlStruct objects, CDR in Rust), ``ferrodds-json`` (the
application hands ferrodds JSON text and gets JSON text back, as OpenDDSharp's JSON path
does), ``ferrodds-json-text`` (JSON text in and out, kept as text: no Python json module),
``cyclonedds`` (cyclonedds-python: the same program as ``ferrodds``, other imports),
``rti`` (RTI Connext through rticonnextdds-connector, samples as dictionaries). The type:
``struct Sample { @key int32 id; uint32 seq; sequence<octet> payload; }``, reliable; ping
and pong KEEP_LAST 1 per instance, pub and sub KEEP_ALL. ``ping`` prints one JSON line of
round-trip times (µs), ``sub`` one of samples/s; the other sides print nothing. ``pong``'s
SIZE is the payload size the ping will send (RTI Connext needs to know: see RtiBackend).
"""

import base64
import importlib
import json
import os
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass

WAIT = 20.0  # seconds for a peer to appear
# A cell's run stops after this long even when it has not sent all its samples (the slow
# implementations would otherwise take an hour for the large cells); the count is reported.
BUDGET = 15.0


class IdlBackend:
    """ferrodds or cyclonedds, through cyclonedds-python's API."""

    def __init__(self, package, domain, keep_all):
        m = lambda name: importlib.import_module(f"{package}.{name}")  # noqa: E731
        idl, t, a = m("idl"), m("idl.types"), m("idl.annotations")
        core, util = m("core"), m("util")

        # sequence<octet>: as `bytes` in ferrodds (its payload crosses as one buffer);
        # cyclonedds-python builds no type object for `bytes`, so a sequence of uint8 there.
        payload_type = bytes if package == "ferrodds" else t.sequence[t.uint8]

        @dataclass
        class Sample(idl.IdlStruct, typename="bench::Sample"):
            id: t.int32
            a.key("id")
            seq: t.uint32
            payload: payload_type

        self.Sample = Sample
        self.core, self.util = core, util
        self.dp = m("domain").DomainParticipant(domain)
        P = core.Policy
        history = P.History.KeepAll if keep_all else P.History.KeepLast(1)
        self.qos = core.Qos(P.Reliability.Reliable(util.duration(seconds=10)), history,
                            P.ResourceLimits(max_samples=10000) if keep_all
                            else P.ResourceLimits())
        self.m = m

    def endpoints(self, out_topic, in_topic):
        Topic = self.m("topic").Topic
        self.writer = self.m("pub").DataWriter(self.dp, Topic(self.dp, out_topic, self.Sample),
                                               qos=self.qos)
        self.reader = self.m("sub").DataReader(self.dp, Topic(self.dp, in_topic, self.Sample),
                                               qos=self.qos)
        self.waitset = self.core.WaitSet(self.dp)
        self.waitset.attach(self.core.ReadCondition(
            self.reader, self.core.SampleState.Any | self.core.ViewState.Any
            | self.core.InstanceState.Any))

    def matched(self):
        return bool(self.writer.get_matched_subscriptions()) and \
            bool(self.reader.get_matched_publications())

    def write(self, i, seq, payload):
        self.writer.write(self.Sample(i, seq, payload))

    def take(self, timeout):
        self.waitset.wait(self.util.duration(seconds=timeout))
        return [(s.id, s.seq, s.payload) for s in self.reader.take(N=256)
                if s.sample_info.valid_data]

    def wait_for_acks(self):
        self.writer.wait_for_acks(self.util.duration(seconds=30))

    def relay(self, timeout):
        # As the Rust pong (crates/ferrodds/examples/pingpong.rs) does: the sample taken is
        # the sample written back.
        self.waitset.wait(self.util.duration(seconds=timeout))
        for s in self.reader.take(N=256):
            if s.sample_info.valid_data:
                if s.id < 0:
                    return False
                self.writer.write(s)
        return True


def relay_values(b, timeout):
    """Writes back what `b` takes, as values; False once the ping has said stop."""
    for i, seq, payload in b.take(timeout):
        if i < 0:
            return False
        b.write(i, seq, payload)
    return True


class JsonBackend(IdlBackend):
    """ferrodds, with JSON text crossing into and out of Rust."""

    def __init__(self, domain, keep_all):
        super().__init__("ferrodds", domain, keep_all)

    def write(self, i, seq, payload):
        # The JSON view has a sequence of octets as base64 text (docs/serialization.md).
        self.writer._native.write_json(json.dumps({
            "id": i, "seq": seq, "payload": base64.b64encode(payload).decode("ascii")}))

    def texts(self, timeout):
        """The JSON texts of the valid samples taken (none after `timeout` seconds)."""
        if not self.reader._native.wait_for_data(timeout):
            return []
        return [text for text, info in self.reader._native.take_json(256) if info.valid_data]

    relay = relay_values

    def take(self, timeout):
        out = []
        for text in self.texts(timeout):
            d = json.loads(text)
            out.append((d["id"], d["seq"], base64.b64decode(d["payload"])))
        return out


class JsonTextBackend(JsonBackend):
    """ferrodds, with JSON text in and out that the application keeps as text (a bridge to
    web clients does this): the pong relays the text it takes, the ping formats its text
    and reads the id and seq from the front of the answer. What is left is the cost of
    FerroDDS's JSON view itself, without Python's json module."""

    HEAD = re.compile(r'\{"id":(-?\d+),"seq":(\d+),')

    def __init__(self, domain, keep_all):
        super().__init__(domain, keep_all)
        self.encoded = (None, "")

    def write(self, i, seq, payload):
        if isinstance(payload, str):  # a JSON text taken: relayed as it is
            self.writer._native.write_json(payload)
            return
        if self.encoded[0] is not payload:  # the ping and pub send one payload throughout
            self.encoded = (payload, base64.b64encode(payload).decode("ascii"))
        self.writer._native.write_json(
            '{"id":%d,"seq":%d,"payload":"%s"}' % (i, seq, self.encoded[1]))

    def take(self, timeout):
        return [(int(head.group(1)), int(head.group(2)), text)
                for text in self.texts(timeout) for head in [self.HEAD.match(text)]]


RTI_XML = """<dds>
<types><struct name="Sample" extensibility="final">
  <member name="id" type="int32" key="true"/>
  <member name="seq" type="uint32"/>
  <member name="payload" type="uint8" sequenceMaxLength="-1"/>
</struct></types>
<domain_library name="Domains"><domain name="D" domain_id="{domain}">
  <register_type name="bench::Sample" type_ref="Sample"/>
  <topic name="{out_topic}" register_type_ref="bench::Sample"/>
  <topic name="{in_topic}" register_type_ref="bench::Sample"/>
</domain></domain_library>
<domain_participant_library name="Bench">
  <domain_participant name="App" domain_ref="Domains::D">
    <participant_qos>
      <transport_builtin><mask>UDPv4</mask></transport_builtin>
      <discovery><initial_peers><element>239.255.0.1</element><element>127.0.0.1</element>
      </initial_peers></discovery>
      <property><value><element><name>dds.transport.UDPv4.builtin.parent.allow_interfaces_list</name>
      <value>127.0.0.1</value></element></value></property>
    </participant_qos>
    <publisher name="p"><data_writer name="w" topic_ref="{out_topic}">{wqos}</data_writer></publisher>
    <subscriber name="s"><data_reader name="r" topic_ref="{in_topic}">{rqos}</data_reader></subscriber>
  </domain_participant>
</domain_participant_library>
</dds>"""


# The largest sample RTI Connext sends from the writing thread: a larger one must be
# fragmented, which Connext 6.1 does only with asynchronous publishing (as RTI's own perftest
# switches it on above 63,000 bytes).
RTI_SYNCHRONOUS_MAX = 63000


def rti_qos(kind, keep_all, size=0):
    history = ("<history><kind>KEEP_ALL_HISTORY_QOS</kind></history>" if keep_all
               else "<history><kind>KEEP_LAST_HISTORY_QOS</kind><depth>1</depth></history>")
    pool = ("<property><value><element><name>dds.data_%s.history.memory_manager.fast_pool."
            "pool_buffer_max_size</name><value>65536</value></element></value></property>"
            % ("writer" if kind == "datawriter_qos" else "reader"))
    publish = ("<publish_mode><kind>ASYNCHRONOUS_PUBLISH_MODE_QOS</kind></publish_mode>"
               if kind == "datawriter_qos" and size > RTI_SYNCHRONOUS_MAX else "")
    return ("<%s><reliability><kind>RELIABLE_RELIABILITY_QOS</kind></reliability>%s%s%s</%s>"
            % (kind, history, pool, publish, kind))


class RtiBackend:
    """RTI Connext through rticonnextdds-connector (samples as dictionaries)."""

    relay = relay_values

    def __init__(self, domain, keep_all, size=0):
        self.domain, self.keep_all, self.size = domain, keep_all, size

    def endpoints(self, out_topic, in_topic):
        import rticonnextdds_connector as rti
        fd, path = tempfile.mkstemp(suffix=".xml")
        with os.fdopen(fd, "w") as f:
            f.write(RTI_XML.format(domain=self.domain, out_topic=out_topic, in_topic=in_topic,
                                   wqos=rti_qos("datawriter_qos", self.keep_all, self.size),
                                   rqos=rti_qos("datareader_qos", self.keep_all)))
        self.connector = rti.Connector("Bench::App", path)
        os.unlink(path)
        self.output = self.connector.get_output("p::w")
        self.input = self.connector.get_input("s::r")

    def matched(self):
        return self.output.matched_subscriptions and self.input.matched_publications

    def write(self, i, seq, payload):
        self.output.instance.set_dictionary({"id": i, "seq": seq, "payload": list(payload)})
        self.output.write()

    def take(self, timeout):
        try:
            self.input.wait(int(timeout * 1000))
        except Exception:  # the connector's timeout
            return []
        self.input.take()
        out = []
        for s in self.input.samples.valid_data_iter:
            d = s.get_dictionary()
            out.append((d["id"], d["seq"], bytes(d["payload"])))
        return out

    def wait_for_acks(self):
        self.output.wait(30000)


def backend(name, domain, keep_all, size=0):
    if name == "ferrodds-json":
        return JsonBackend(domain, keep_all)
    if name == "ferrodds-json-text":
        return JsonTextBackend(domain, keep_all)
    if name == "rti":
        return RtiBackend(domain, keep_all, size)
    return IdlBackend(name, domain, keep_all)


def wait_matched(b):
    deadline = time.monotonic() + WAIT
    while not b.matched():
        if time.monotonic() > deadline:
            raise SystemExit("no peer matched")
        time.sleep(0.01)


def pong(b):
    b.endpoints("bench_pong", "bench_ping")
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and b.relay(1.0):
        pass


def ping(b, instances, per_instance, size):
    b.endpoints("bench_ping", "bench_pong")
    wait_matched(b)
    payload = bytes(range(256)) * (size // 256) + bytes(size % 256)
    rtts = []
    total = instances * per_instance
    warmup = min(200, total)
    budget = None
    for k in range(-warmup, total):
        if k == 0:
            budget = time.monotonic() + BUDGET
        elif k > 0 and time.monotonic() > budget:
            break
        i = k % instances
        seq = k & 0xFFFFFFFF
        start = time.perf_counter_ns()
        b.write(i, seq, payload)
        got = False
        deadline = time.monotonic() + 10
        while not got:
            answers = b.take(1.0)
            for (ri, rseq, _) in answers:
                got = got or rseq == seq
            if not got and time.monotonic() > deadline:
                raise SystemExit(f"no answer to {seq}")
            if not answers:
                # A second without an answer: the pong's writer may not have matched this
                # reader when the first ping came (each side waits only for its own
                # matches), so its answer went nowhere. Again.
                b.write(i, seq, payload)
        if k >= 0:
            rtts.append((time.perf_counter_ns() - start) / 1000)
    b.write(-1, 0, b"")
    time.sleep(0.2)
    rtts.sort()
    print(json.dumps({"count": len(rtts), "p50_us": statistics.median(rtts),
                      "p90_us": rtts[int(len(rtts) * 0.9)], "mean_us": statistics.fmean(rtts)}))


def sub(b, count):
    b.endpoints("bench_unused", "bench_data")
    n, first, last = 0, None, None
    deadline = time.monotonic() + 600
    while n < count and time.monotonic() < deadline:
        got = b.take(1.0)
        if got:
            now = time.perf_counter()
            first = first or now
            last = now
            n += len(got)
        elif last is not None and time.perf_counter() - last > 3.0:
            break  # the publisher stopped early (its budget)
    seconds = (last - first) if first and last and last > first else float("nan")
    print(json.dumps({"count": n, "samples_per_s": (n - 1) / seconds}))


def pub(b, count, size):
    b.endpoints("bench_data", "bench_unused")
    deadline = time.monotonic() + WAIT
    while not (b.writer.get_matched_subscriptions() if hasattr(b, "writer")
               else b.output.matched_subscriptions):
        if time.monotonic() > deadline:
            raise SystemExit("no subscriber")
        time.sleep(0.01)
    time.sleep(0.2)
    payload = bytes(size)
    budget = time.monotonic() + BUDGET
    for k in range(count):
        if time.monotonic() > budget:
            break
        b.write(k % 100, k, payload)
    b.wait_for_acks()


def main(argv):
    role, name, domain = argv[0], argv[1], int(argv[2])
    size = {"pong": 3, "ping": 5, "pub": 4}.get(role)
    size = int(argv[size]) if size is not None and len(argv) > size else 0
    b = backend(name, domain, keep_all=role in ("pub", "sub"), size=size)
    if role == "pong":
        pong(b)
    elif role == "ping":
        ping(b, int(argv[3]), int(argv[4]), int(argv[5]))
    elif role == "sub":
        sub(b, int(argv[3]))
    elif role == "pub":
        pub(b, int(argv[3]), int(argv[4]))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
    os._exit(0)
