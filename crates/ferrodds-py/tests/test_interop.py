"""ferrodds (Python) and cyclonedds-python 11 in one process, each on its own participant:
samples of keyed appendable and mutable types both ways, values compared exactly, dispose
and instance states, and a TRANSIENT_LOCAL late joiner. The programs are the same for both
packages but for the module they import."""

import importlib
import time

import pytest

from common import make_types

# The Python tests run after the Rust ones (scripts/test), so the domains of the Rust
# publish/subscribe tests are free; each test has its own topic besides.
DOMAIN = 45
TIMEOUT = 10.0


class Side:
    """One package's participant, and its types."""

    def __init__(self, package: str, domain: int = DOMAIN):
        self.package = package
        self.types = make_types(package)
        m = lambda name: importlib.import_module(f"{package}.{name}")  # noqa: E731
        self.domain, self.topic, self.pub, self.sub, self.core, self.util = (
            m("domain"), m("topic"), m("pub"), m("sub"), m("core"), m("util"))
        self.participant = self.domain.DomainParticipant(domain)

    def qos(self, transient_local=False):
        P = self.core.Policy
        policies = [P.Reliability.Reliable(self.util.duration(seconds=1)),
                    P.History.KeepLast(100)]
        if transient_local:
            policies.append(P.Durability.TransientLocal)
        return self.core.Qos(*policies)

    def writer(self, name, type_name, transient_local=False):
        topic = self.topic.Topic(self.participant, name, self.types[type_name])
        return self.pub.DataWriter(self.participant, topic, qos=self.qos(transient_local))

    def reader(self, name, type_name, transient_local=False):
        topic = self.topic.Topic(self.participant, name, self.types[type_name])
        return self.sub.DataReader(self.participant, topic, qos=self.qos(transient_local))


@pytest.fixture(scope="module")
def sides():
    return {"ferrodds": Side("ferrodds"), "cyclonedds": Side("cyclonedds")}


def matched(writer, reader=None, count=1):
    """Both ends know each other (a reader drops data from a writer it has not matched
    yet, so a volatile test waits for both)."""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        if len(writer.get_matched_subscriptions()) >= count and (
                reader is None or len(reader.get_matched_publications()) >= count):
            return True
        time.sleep(0.05)
    return False


def collect(reader, n):
    """Up to ``n`` samples (valid or not) within the timeout."""
    got = []
    deadline = time.monotonic() + TIMEOUT
    while len(got) < n and time.monotonic() < deadline:
        got.extend(reader.take(N=n))
        if len(got) < n:
            time.sleep(0.02)
    return got


DIRECTIONS = [("ferrodds", "cyclonedds"), ("cyclonedds", "ferrodds")]


@pytest.mark.parametrize("src,dst", DIRECTIONS)
@pytest.mark.parametrize("type_name,make", [("Everything", "everything"), ("Mutable", "mutable")])
def test_samples_cross_exactly(sides, src, dst, type_name, make):
    topic = f"py_{type_name}_{src}_to_{dst}"
    reader = sides[dst].reader(topic, type_name)
    writer = sides[src].writer(topic, type_name)
    assert matched(writer, reader), f"{src} writer never matched the {dst} reader"
    sent = [sides[src].types[make](i) for i in range(1, 7)]
    for s in sent:
        writer.write(s)
    got = collect(reader, len(sent))
    expected = [sides[dst].types[make](i) for i in range(1, 7)]
    values = [g for g in got if g.sample_info.valid_data]
    # Compare by the readers' own JSON-free view: re-serialized by the receiving package.
    assert [v.serialize() for v in values] == [e.serialize() for e in expected]


@pytest.mark.parametrize("src,dst", DIRECTIONS)
def test_dispose_reaches_the_reader(sides, src, dst):
    topic = f"py_dispose_{src}_to_{dst}"
    reader = sides[dst].reader(topic, "Plain")
    writer = sides[src].writer(topic, "Plain")
    assert matched(writer, reader)
    Plain = sides[src].types["Plain"]
    writer.write(Plain(1, 1.0, "one"))
    writer.write(Plain(2, 2.0, "two"))
    got = collect(reader, 2)
    assert [(g.id, g.name) for g in got] == [(1, "one"), (2, "two")]
    Alive = sides[dst].core.InstanceState.Alive
    assert all(g.sample_info.instance_state == Alive for g in got)
    # Both samples taken: the dispose can only arrive as a sample without data.
    writer.dispose(Plain(1, 1.0, "one"))
    got = collect(reader, 1)
    assert len(got) == 1, got
    disposed = got[0]
    assert not disposed.sample_info.valid_data
    assert disposed.sample_info.instance_state == sides[dst].core.InstanceState.NotAliveDisposed
    assert disposed.key_sample.id == 1


@pytest.mark.parametrize("src,dst", DIRECTIONS)
def test_transient_local_late_joiner(sides, src, dst):
    topic = f"py_late_{src}_to_{dst}"
    writer = sides[src].writer(topic, "Plain", transient_local=True)
    Plain = sides[src].types["Plain"]
    for i in range(5):
        writer.write(Plain(i, i / 2, f"early-{i}"))
    reader = sides[dst].reader(topic, "Plain", transient_local=True)
    got = collect(reader, 5)
    assert [(g.id, g.value, g.name) for g in got] == [(i, i / 2, f"early-{i}") for i in range(5)]
