"""Listeners on publishers, subscribers and participants, and DCPS's fallback: a status
goes to the entity's own listener if it has that callback, else to its publisher's or
subscriber's, else to its participant's; a subscriber's ``on_data_on_readers`` takes
precedence over the readers' ``on_data_available``."""

import threading
import time
from dataclasses import dataclass

from ferrodds import idl
from ferrodds.core import Listener, Policy, Qos
from ferrodds.domain import DomainParticipant
from ferrodds.idl import types as t
from ferrodds.pub import DataWriter, Publisher
from ferrodds.sub import DataReader, Subscriber
from ferrodds.topic import Topic
from ferrodds.util import duration

DOMAIN = 56
RELIABLE = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.History.KeepAll)


@dataclass
class Note(idl.IdlStruct, typename="listeners::Note"):
    n: t.int32


class Calls:
    def __init__(self):
        self.lock = threading.Lock()
        self.seen = []

    def add(self, *what):
        with self.lock:
            self.seen.append(what)

    def wait(self, predicate, timeout=10.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if predicate(list(self.seen)):
                    return list(self.seen)
            time.sleep(0.02)
        with self.lock:
            return list(self.seen)


def test_statuses_fall_back_to_the_publisher_and_the_participant():
    calls = Calls()
    dp = DomainParticipant(DOMAIN, listener=Listener(
        on_subscription_matched=lambda r, s: calls.add("participant", "matched", r)))
    publisher = Publisher(dp, listener=Listener(
        on_publication_matched=lambda w, s: calls.add("publisher", "matched", w)))
    topic = Topic(dp, "listeners_fallback", Note)
    writer = DataWriter(publisher, topic, qos=RELIABLE)
    reader = DataReader(dp, topic, qos=RELIABLE, listener=Listener(
        on_data_available=lambda r: calls.add("reader", "data", r)))
    seen = calls.wait(lambda s: ("publisher", "matched", writer) in s
                      and ("participant", "matched", reader) in s)
    assert ("publisher", "matched", writer) in seen
    assert ("participant", "matched", reader) in seen
    writer.write(Note(1))
    seen = calls.wait(lambda s: ("reader", "data", reader) in s)
    assert ("reader", "data", reader) in seen


def test_a_subscribers_data_on_readers_takes_precedence_over_data_available():
    calls = Calls()
    dp = DomainParticipant(DOMAIN)
    subscriber = Subscriber(dp, listener=Listener(
        on_data_on_readers=lambda s: calls.add("subscriber", s)))
    topic = Topic(dp, "listeners_on_readers", Note)
    writer = DataWriter(dp, topic, qos=RELIABLE)
    reader = DataReader(subscriber, topic, qos=RELIABLE, listener=Listener(
        on_data_available=lambda r: calls.add("reader", r)))
    deadline = time.monotonic() + 10
    while not writer.get_matched_subscriptions() and time.monotonic() < deadline:
        time.sleep(0.02)
    writer.write(Note(1))
    seen = calls.wait(lambda s: ("subscriber", subscriber) in s)
    assert ("subscriber", subscriber) in seen
    time.sleep(0.2)
    assert not any(c[0] == "reader" for c in calls.seen)
    assert [n.n for n in reader.take(N=10)] == [1]
