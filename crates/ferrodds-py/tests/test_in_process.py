"""The in-process transport seen from Python: participants of one process reach each other
through it, and a child made by ``fork`` (``multiprocessing``'s default on Linux) does not
take its parent's participants for its own — it inherits their registry and random tag, and
must reach them over UDP."""

import multiprocessing
import time
from dataclasses import dataclass

import pytest

from ferrodds import idl
from ferrodds.core import Policy, Qos
from ferrodds.domain import DomainParticipant
from ferrodds.idl import types as t
from ferrodds.pub import DataWriter
from ferrodds.sub import DataReader
from ferrodds.topic import Topic
from ferrodds.util import duration

DOMAIN = 46


@dataclass
class Note(idl.IdlStruct, typename="inprocess::Note"):
    n: t.int32


QOS = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.History.KeepAll)


def _write_three(topic_name):
    dp = DomainParticipant(DOMAIN)
    writer = DataWriter(dp, Topic(dp, topic_name, Note), qos=QOS)
    deadline = time.monotonic() + 10
    while not writer.get_matched_subscriptions() and time.monotonic() < deadline:
        time.sleep(0.01)
    for n in range(3):
        writer.write(Note(n))
    writer.wait_for_acks(duration(seconds=10))


def _take_three(reader):
    got = []
    deadline = time.monotonic() + 15
    while len(got) < 3 and time.monotonic() < deadline:
        # The writer's participant may be gone already: its unregistration is no sample.
        got += [s.n for s in reader.take(N=10) if s.sample_info.valid_data]
        time.sleep(0.01)
    return got


def test_participants_of_one_process_reach_each_other():
    dp = DomainParticipant(DOMAIN)
    reader = DataReader(dp, Topic(dp, "inprocess_same", Note), qos=QOS)
    _write_three("inprocess_same")
    assert _take_three(reader) == [0, 1, 2]


def test_a_forked_child_reaches_its_parent():
    dp = DomainParticipant(DOMAIN)
    reader = DataReader(dp, Topic(dp, "inprocess_fork", Note), qos=QOS)
    child = multiprocessing.get_context("fork").Process(target=_write_three,
                                                        args=("inprocess_fork",))
    child.start()
    got = _take_three(reader)
    child.join(15)
    assert got == [0, 1, 2]
    assert child.exitcode == 0


def test_json_text_written_is_taken():
    # The JSON path (benches/python): `write_json` reads the text where Python keeps it.
    dp = DomainParticipant(DOMAIN)
    topic = Topic(dp, "inprocess_json", Note)
    reader = DataReader(dp, topic, qos=QOS)
    writer = DataWriter(dp, topic, qos=QOS)
    for n in range(3):
        writer._native.write_json(f'{{"n": {n}}}')
    assert _take_three(reader) == [0, 1, 2]
    with pytest.raises(UnicodeEncodeError):
        writer._native.write_json('{"n": "\ud800"}')


@dataclass
class Other(idl.IdlStruct, typename="inprocess::Other"):
    n: t.int32


def test_a_sample_of_another_type_is_refused():
    # The check is made in Rust (src/entities.rs, `Writer::value_of`): the same attributes
    # do not make an `Other` a `Note`, and nothing is written.
    dp = DomainParticipant(DOMAIN)
    topic = Topic(dp, "inprocess_other", Note)
    reader = DataReader(dp, topic, qos=QOS)
    writer = DataWriter(dp, topic, qos=QOS)
    with pytest.raises(TypeError, match="Other is not Note, the type of topic 'inprocess_other'"):
        writer.write(Other(1))
    with pytest.raises(TypeError, match="Other is not Note"):
        writer.dispose(Other(1))
    with pytest.raises(TypeError, match="Other is not Note"):
        writer.unregister_instance(Other(1))
    writer.write(Note(2))
    deadline = time.monotonic() + 10
    got = []
    while not got and time.monotonic() < deadline:
        got = [s.n for s in reader.take(N=10) if s.sample_info.valid_data]
        time.sleep(0.01)
    assert got == [2]
