"""PRESENTATION and durability policies from Python, as cyclonedds-python spells them:
``Policy.PresentationAccessScope.Topic(coherent_access=True, ...)`` on a ``Publisher`` and a
``Subscriber``, ``begin_coherent()``/``end_coherent()``, ``Policy.Durability.Transient``."""

import os
import time
from dataclasses import dataclass

from ferrodds import idl
from ferrodds.core import Policy, Qos
from ferrodds.domain import DomainParticipant
from ferrodds.idl import annotations as a
from ferrodds.idl import types as t
from ferrodds.pub import DataWriter, Publisher
from ferrodds.sub import DataReader, Subscriber
from ferrodds.topic import Topic
from ferrodds.util import duration

DOMAIN = 57


@dataclass
class Part(idl.IdlStruct, typename="presentation::Part"):
    id: t.int32
    a.key("id")
    value: t.int32


RELIABLE = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.History.KeepAll)


def until(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    return predicate()


def test_a_coherent_set_arrives_whole_when_it_ends():
    scope = Qos(Policy.PresentationAccessScope.Topic(coherent_access=True, ordered_access=False))
    dp = DomainParticipant(DOMAIN)
    topic = Topic(dp, "coherent_parts", Part)
    publisher = Publisher(dp, qos=scope)
    writer = DataWriter(publisher, topic, qos=RELIABLE)
    reader = DataReader(Subscriber(dp, qos=scope), topic, qos=RELIABLE)
    assert until(lambda: writer.get_matched_subscriptions())
    publisher.begin_coherent()
    for i in range(3):
        writer.write(Part(i, i * 10))
    assert writer.wait_for_acks(duration(seconds=10))
    time.sleep(0.2)
    assert reader.take(N=10) == [], "nothing of the set before it ends"
    publisher.end_coherent()
    got = until(lambda: reader.take(N=10))
    assert sorted((p.id, p.value) for p in got) == [(0, 0), (1, 10), (2, 20)]


def test_a_publisher_without_coherent_access_does_not_match_a_reader_that_asks_for_it():
    dp = DomainParticipant(DOMAIN)
    topic = Topic(dp, "coherent_incompatible", Part)
    writer = DataWriter(Publisher(dp), topic, qos=RELIABLE)
    wants = Qos(Policy.PresentationAccessScope.Topic(coherent_access=True, ordered_access=False))
    reader = DataReader(Subscriber(dp, qos=wants), topic, qos=RELIABLE)
    assert until(lambda: reader.get_requested_incompatible_qos_status().total_count >= 1)
    assert not writer.get_matched_subscriptions()


def test_transient_durability_is_accepted_and_serves_late_joiners():
    durable = RELIABLE + Qos(Policy.Durability.Transient,
                             Policy.DurabilityService(cleanup_delay=0,
                                                      history=Policy.History.KeepLast(1)))
    dp = DomainParticipant(DOMAIN)
    topic = Topic(dp, "transient_parts", Part)
    writer = DataWriter(dp, topic, qos=durable)
    writer.write(Part(1, 1))
    reader = DataReader(dp, topic, qos=RELIABLE + Qos(Policy.Durability.Transient))
    got = until(lambda: reader.take(N=10))
    assert [(p.id, p.value) for p in got] == [(1, 1)]


GROUP_WRITER = r'''
import sys, time
sys.path.insert(0, sys.argv[3])
from test_presentation import Part, RELIABLE
from ferrodds.core import Policy, Qos
from ferrodds.domain import DomainParticipant
from ferrodds.pub import DataWriter, Publisher
from ferrodds.topic import Topic
from ferrodds.util import duration

scope = Qos(Policy.PresentationAccessScope.Group(coherent_access=False, ordered_access=True))
dp = DomainParticipant(int(sys.argv[1]))
publisher = Publisher(dp, qos=scope)
writers = {name: DataWriter(publisher, Topic(dp, name, Part), qos=RELIABLE)
           for name in ("group_ticks", "group_tocks")}
deadline = time.monotonic() + 10
while time.monotonic() < deadline and not all(w.get_matched_subscriptions() for w in writers.values()):
    time.sleep(0.02)
for i, name in enumerate(sys.argv[2].split(",")):
    writers[name].write(Part(i, i))
for w in writers.values():
    w.wait_for_acks(duration(seconds=10))
print("written", flush=True)
time.sleep(1)
'''


def test_group_ordered_access_reads_another_process_publisher_in_its_order():
    """A publisher with GROUP ordered access in another process writes to two topics in
    turn; ``get_datareaders()`` lists the subscriber's two readers in the order it wrote."""
    import subprocess
    import sys
    scope = Qos(Policy.PresentationAccessScope.Group(coherent_access=False, ordered_access=True))
    dp = DomainParticipant(DOMAIN)
    subscriber = Subscriber(dp, qos=scope)
    readers = {name: DataReader(subscriber, Topic(dp, name, Part), qos=RELIABLE)
               for name in ("group_ticks", "group_tocks")}
    order = ["group_ticks", "group_tocks", "group_tocks", "group_ticks", "group_tocks",
             "group_ticks", "group_ticks", "group_tocks"]
    here = os.path.dirname(os.path.abspath(__file__))
    child = subprocess.Popen(
        [sys.executable, "-c", GROUP_WRITER, str(DOMAIN), ",".join(order), here],
        stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "written"
        subscriber.begin_coherent()
        listed = subscriber.get_datareaders()
        assert [r.topic.name for r in listed] == order
        read = [s.id for r in listed for s in r.take(N=1)]
        subscriber.end_coherent()
        assert read == list(range(len(order)))
    finally:
        child.wait(timeout=20)
