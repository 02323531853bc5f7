"""Statuses, read as cyclonedds-python reads them (``get_*_status()``), with the
``*_change`` fields reset by each read, against cyclonedds-python peers."""

import time

import pytest

from test_interop import Side

DOMAIN = 48
RELIABILITY_QOS_POLICY_ID = 11


@pytest.fixture(scope="module")
def sides():
    return {"ferrodds": Side("ferrodds", DOMAIN), "cyclonedds": Side("cyclonedds", DOMAIN)}


def until(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    return predicate()


def matched_pair(side, name):
    """A writer and a reader of topic ``name`` (type Plain) of one side, matched."""
    writer = side.writer(name, "Plain")
    reader = side.reader(name, "Plain")
    assert until(lambda: writer.get_matched_subscriptions()
                 and reader.get_matched_publications())
    return writer, reader


def test_matched_status_counts_and_resets(sides):
    f, c = sides["ferrodds"], sides["cyclonedds"]
    writer = f.writer("status_matched", "Plain")
    first = writer.get_publication_matched_status()
    assert (first.total_count, first.current_count) == (0, 0)
    reader = c.reader("status_matched", "Plain")
    s = until(lambda: (lambda s: s if s.current_count == 1 else None)(
        writer.get_publication_matched_status()))
    assert (s.total_count, s.total_count_change, s.current_count, s.current_count_change) \
        == (1, 1, 1, 1)
    assert s.last_subscription_handle != 0
    again = writer.get_publication_matched_status()
    assert (again.total_count_change, again.current_count_change) == (0, 0)
    # The reader side, from our reader of a Cyclone writer.
    freader = f.reader("status_matched_back", "Plain")
    cwriter = c.writer("status_matched_back", "Plain")
    s = until(lambda: (lambda s: s if s.current_count == 1 else None)(
        freader.get_subscription_matched_status()))
    assert (s.total_count, s.current_count, s.current_count_change) == (1, 1, 1)
    # Each side matches when it has the other's announcement: ours may come first.
    assert until(lambda: cwriter.get_publication_matched_status().current_count == 1)
    del reader


def test_incompatible_qos_names_the_policy(sides):
    f, c = sides["ferrodds"], sides["cyclonedds"]
    P = f.core.Policy
    Topic = f.topic.Topic
    t = Topic(f.participant, "status_incompatible", f.types["Plain"])
    writer = f.pub.DataWriter(f.participant, t, qos=f.core.Qos(P.Reliability.BestEffort))
    reader = c.reader("status_incompatible", "Plain")  # reliable: asks more than offered
    s = until(lambda: (lambda s: s if s.total_count else None)(
        writer.get_offered_incompatible_qos_status()))
    assert s.total_count == 1 and s.total_count_change == 1
    assert s.last_policy_id == RELIABILITY_QOS_POLICY_ID
    theirs = until(lambda: (lambda s: s if s.total_count else None)(
        reader.get_requested_incompatible_qos_status()))
    assert theirs.last_policy_id == RELIABILITY_QOS_POLICY_ID
    assert writer.get_offered_incompatible_qos_status().total_count_change == 0
    # And the other way: our reliable reader, their best-effort writer.
    ct = c.topic.Topic(c.participant, "status_incompatible_back", c.types["Plain"])
    c.pub.DataWriter(c.participant, ct, qos=c.core.Qos(c.core.Policy.Reliability.BestEffort))
    freader = f.reader("status_incompatible_back", "Plain")
    s = until(lambda: (lambda s: s if s.total_count else None)(
        freader.get_requested_incompatible_qos_status()))
    assert (s.total_count, s.last_policy_id) == (1, RELIABILITY_QOS_POLICY_ID)
    assert freader.get_sample_lost_status().total_count == 0
    assert freader.get_sample_rejected_status().total_count == 0


@pytest.mark.parametrize("package", ["ferrodds", "cyclonedds"])
def test_state_masks_select_in_the_reader(sides, package):
    """A read or take with a state mask or an instance handle hands out only what it
    selects and leaves the other samples as they were — checked against cyclonedds-python
    doing the same."""
    side = sides[package]
    S, V, I = side.core.SampleState, side.core.ViewState, side.core.InstanceState
    ReadCondition = side.core.ReadCondition
    writer, reader = matched_pair(side, f"status_masks_{package}")
    Plain = side.types["Plain"]

    def names(samples):
        # Across instances the order is the implementation's (Cyclone groups by instance,
        # FerroDDS keeps arrival order); within one it is the writer's.
        return sorted((s.id, s.name) for s in samples)

    def gather(fn, n):
        got, deadline = [], time.monotonic() + 10
        while len(got) < n and time.monotonic() < deadline:
            got += fn(N=10, condition=ReadCondition(reader, S.NotRead | V.Any | I.Any))
            time.sleep(0.02)
        return got

    for i, key in enumerate([1, 2, 1]):
        writer.write(Plain(id=key, value=0.0, name=f"s{i}"))
    got = gather(reader.read, 3)
    assert names(got) == [(1, "s0"), (1, "s2"), (2, "s1")]
    handle_1 = next(s.sample_info.instance_handle for s in got if s.id == 1)
    writer.write(Plain(id=2, value=0.0, name="s3"))
    assert names(gather(reader.read, 1)) == [(2, "s3")]
    # Every sample is READ now: a read condition on READ samples triggers a wait set, one on
    # NOT_READ samples does not.
    duration = side.util.duration
    on_read, on_unread = side.core.WaitSet(side.participant), side.core.WaitSet(side.participant)
    on_read.attach(ReadCondition(reader, S.Read | V.Any | I.Any))
    on_unread.attach(ReadCondition(reader, S.NotRead | V.Any | I.Any))
    assert on_read.wait(duration(seconds=5)) == 1
    assert on_unread.wait(duration(milliseconds=50)) == 0
    writer.write(Plain(id=1, value=0.0, name="s4"))
    # The one not read yet, taken alone; the READ ones stay.
    assert names(gather(reader.take, 1)) == [(1, "s4")]
    assert [s.name for s in reader.take(N=10, instance_handle=handle_1)] == ["s0", "s2"]
    rest = reader.take(N=10)
    assert [s.name for s in rest] == ["s1", "s3"]
    assert all(s.sample_info.sample_state == S.Read for s in rest)
    assert reader.take(N=10) == []


@pytest.mark.parametrize("package,peer", [("ferrodds", "cyclonedds"), ("cyclonedds", "ferrodds")])
def test_status_listeners_are_called_with_the_status(sides, package, peer):
    """``Listener(on_publication_matched=..., ...)`` callbacks run with the entity and its
    status when a peer of the other package matches or does not fit — the same calls
    with either package."""
    side, other = sides[package], sides[peer]
    heard = []

    def record(name):
        return lambda entity, status: heard.append((name, status.total_count))

    listener = side.core.Listener(
        on_publication_matched=record("publication_matched"),
        on_subscription_matched=record("subscription_matched"),
        on_offered_incompatible_qos=record("offered_incompatible_qos"))
    P = side.core.Policy
    name = f"status_listeners_{package}"
    topic = side.topic.Topic(side.participant, name, side.types["Plain"])
    writer = side.pub.DataWriter(side.participant, topic, qos=side.qos(), listener=listener)
    weak_topic = side.topic.Topic(side.participant, name + "_weak", side.types["Plain"])
    weak = side.pub.DataWriter(side.participant, weak_topic,
                               qos=side.core.Qos(P.Reliability.BestEffort), listener=listener)
    reader = other.reader(name, "Plain")
    strict = other.reader(name + "_weak", "Plain")  # reliable: more than `weak` offers
    assert until(lambda: ("publication_matched", 1) in heard
                 and ("offered_incompatible_qos", 1) in heard), heard
    assert ("subscription_matched", 1) not in heard  # a writer's listener hears its own
    assert weak.get_publication_matched_status().current_count == 0
    del reader, strict


@pytest.mark.parametrize("package", ["ferrodds", "cyclonedds"])
def test_a_waitset_wakes_for_a_query_condition_only_when_its_filter_keeps_a_sample(sides,
                                                                                  package):
    side = sides[package]
    S, V, I = side.core.SampleState, side.core.ViewState, side.core.InstanceState
    writer, reader = matched_pair(side, f"status_query_wait_{package}")
    Plain = side.types["Plain"]
    big = side.core.QueryCondition(reader, S.Any | V.Any | I.Any, lambda s: s.value >= 100.0)
    ws = side.core.WaitSet(side.participant)
    ws.attach(big)
    writer.write(Plain(id=1, value=1.0, name="small"))
    assert until(lambda: reader.read(N=10))
    started = time.monotonic()
    assert ws.wait(side.util.duration(milliseconds=300)) == 0
    assert time.monotonic() - started >= 0.25
    writer.write(Plain(id=2, value=100.0, name="big"))
    assert ws.wait(side.util.duration(seconds=5)) == 1
    assert [s.id for s in reader.take(N=10, condition=big)] == [2]


@pytest.mark.parametrize("package", ["ferrodds", "cyclonedds"])
def test_a_waitset_on_one_read_condition_takes_every_kind_of_timeout(sides, package):
    # FerroDDS answers this common wait in one call into the reader (WaitSet.wait): the
    # timeouts as cyclonedds-python takes them, nanoseconds or None, the same either way.
    side = sides[package]
    Plain = side.types["Plain"]
    writer, reader = matched_pair(side, f"status_one_condition_{package}")
    ws = side.core.WaitSet(side.participant)
    ws.attach(side.core.ReadCondition(reader, side.core.SampleState.NotRead))
    for nothing in (0, side.util.duration(milliseconds=1)):
        assert ws.wait(nothing) == 0
    started = time.monotonic()
    assert ws.wait(side.util.duration(milliseconds=200)) == 0
    assert time.monotonic() - started >= 0.15
    writer.write(Plain(id=1, value=1.0, name="one"))
    for timeout in (side.util.duration(seconds=5), side.util.duration(infinite=True)):
        assert ws.wait(timeout) == 1
    if package == "ferrodds":  # cyclonedds-python's wait takes no None
        assert ws.wait(None) == 1
    assert [s.id for s in reader.take(N=10)] == [1]
    assert ws.wait(0) == 0


@pytest.mark.parametrize("package", ["ferrodds", "cyclonedds"])
def test_a_waitset_on_two_readers_and_a_guard_wakes_for_each(sides, package):
    side = sides[package]
    Plain = side.types["Plain"]
    first_writer, first = matched_pair(side, f"status_two_first_{package}")
    second_writer, second = matched_pair(side, f"status_two_second_{package}")
    guard = side.core.GuardCondition(side.participant)
    ws = side.core.WaitSet(side.participant)
    for condition in (side.core.ReadCondition(first, side.core.SampleState.NotRead),
                      side.core.ReadCondition(second, side.core.SampleState.NotRead), guard):
        ws.attach(condition)
    assert ws.wait(side.util.duration(milliseconds=100)) == 0
    # Data for the second reader ends the wait (it sleeps on both readers at once).
    second_writer.write(Plain(id=2, value=2.0, name="second"))
    assert ws.wait(side.util.duration(seconds=5)) == 1
    assert [s.id for s in second.take(N=10)] == [2]
    first_writer.write(Plain(id=1, value=1.0, name="first"))
    assert ws.wait(side.util.duration(seconds=5)) == 1
    assert [s.id for s in first.take(N=10)] == [1]
    # A guard condition set from another thread, while the wait sleeps on the readers.
    setter = __import__("threading").Timer(0.2, lambda: guard.set(True))
    setter.start()
    assert ws.wait(side.util.duration(seconds=5)) == 1
    setter.join()
    assert guard.take()


@pytest.mark.parametrize("package", ["ferrodds", "cyclonedds"])
def test_a_query_condition_takes_only_what_its_filter_keeps(sides, package):
    side = sides[package]
    S, V, I = side.core.SampleState, side.core.ViewState, side.core.InstanceState
    writer, reader = matched_pair(side, f"status_query_{package}")
    Plain = side.types["Plain"]
    for key in range(6):
        writer.write(Plain(id=key, value=float(key), name=f"n{key}"))
    assert until(lambda: len(reader.read(N=10)) == 6)
    big = side.core.QueryCondition(reader, S.Any | V.Any | I.Any, lambda s: s.value >= 3.0)
    assert sorted(s.id for s in reader.take(N=10, condition=big)) == [3, 4, 5]
    # The ones the filter rejected stay, READ as they were.
    rest = reader.take(N=10)
    assert sorted(s.id for s in rest) == [0, 1, 2]
    assert all(s.sample_info.sample_state == S.Read for s in rest)
    if package == "ferrodds":
        # A filter that raises: the exception reaches the caller, nothing is taken.
        writer.write(Plain(id=9, value=9.0, name="n9"))
        assert until(lambda: reader.read(N=10))

        def broken(sample):
            raise ValueError("filter failed")
        with pytest.raises(ValueError, match="filter failed"):
            reader.take(N=10, condition=side.core.QueryCondition(reader, S.Any | V.Any | I.Any,
                                                                  broken))
        assert [s.id for s in reader.take(N=10)] == [9]


@pytest.mark.parametrize("package,peer", [("ferrodds", "cyclonedds"), ("cyclonedds", "ferrodds"),
                                          ("ferrodds", "ferrodds")])
def test_liveliness_changes_as_a_manual_writer_writes_and_stops(sides, package, peer):
    """A MANUAL_BY_TOPIC writer (400 ms lease) of ``package``, read by ``peer``: alive while
    it writes, not alive (``on_liveliness_changed``, ``on_liveliness_lost``) once it stops,
    alive again when it asserts (ferrodds to ferrodds: ``assert_liveliness()``; otherwise a
    write: cyclonedds-python 11.0.1 has no such call, and a Cyclone reader revives a writer
    on its data only) — the same program with either package."""
    side, other = sides[package], sides[peer]
    P = side.core.Policy
    Plain = side.types["Plain"]
    name = f"liveliness_{package}_{peer}"
    lost = []
    topic = side.topic.Topic(side.participant, name, Plain)
    wqos = side.core.Qos(P.Reliability.Reliable(side.util.duration(seconds=1)),
                         P.Liveliness.ManualByTopic(side.util.duration(milliseconds=400)))
    writer = side.pub.DataWriter(
        side.participant, topic, qos=wqos,
        listener=side.core.Listener(on_liveliness_lost=lambda w, s: lost.append(s.total_count)))
    changes = []
    otopic = other.topic.Topic(other.participant, name, other.types["Plain"])
    reader = other.sub.DataReader(
        other.participant, otopic, qos=other.qos(),
        listener=other.core.Listener(on_liveliness_changed=lambda r, s: changes.append(
            (s.alive_count, s.not_alive_count, s.alive_count_change, s.not_alive_count_change))))
    assert until(lambda: writer.get_matched_subscriptions() and reader.get_matched_publications())
    for i in range(10):  # a second of writes
        writer.write(Plain(id=1, value=float(i), name="beat"))
        time.sleep(0.1)
    s = reader.get_liveliness_changed_status()
    assert (s.alive_count, s.not_alive_count) == (1, 0), s
    # The listener is called with the change (the call reads the status, as DCPS says).
    assert until(lambda: (0, 1, -1, 1) in changes, 3.0), changes
    s = reader.get_liveliness_changed_status()
    assert (s.alive_count, s.not_alive_count, s.not_alive_count_change) == (0, 1, 0), s
    assert until(lambda: lost == [1], 2.0), lost
    assert writer.get_liveliness_lost_status().total_count == 1
    if hasattr(writer, "assert_liveliness") and peer == "ferrodds":
        writer.assert_liveliness()
    else:
        # Cyclone does not bring a MANUAL_BY_TOPIC writer it marked not alive back on a
        # HEARTBEAT with the liveliness flag (what an assertion sends); data does.
        writer.write(Plain(id=1, value=-1.0, name="back"))
    # Waited for through the listener only: a read of the status meanwhile would take the
    # change the listener's call reports.
    assert until(lambda: changes[-1][:2] == (1, 0), 3.0), changes
    s = reader.get_liveliness_changed_status()
    assert (s.alive_count, s.not_alive_count) == (1, 0), s


@pytest.mark.parametrize("package,peer", [("ferrodds", "cyclonedds"), ("ferrodds", "ferrodds")])
@pytest.mark.parametrize("autodispose", [True, False])
def test_a_deleted_writer_disposes_its_instances_unless_told_not_to(sides, package, peer,
                                                                   autodispose):
    """WRITER_DATA_LIFECYCLE: a writer of ``package`` writes two instances and is deleted;
    ``peer``'s reader sees them disposed (autodispose, the default) or left without
    writers. (A cyclonedds-python writer is not deleted by ``del`` while the package holds
    references to it, so only ferrodds writers are deleted here.)"""
    side, other = sides[package], sides[peer]
    P = side.core.Policy
    Plain = side.types["Plain"]
    name = f"lifecycle_{peer}_{autodispose}"
    topic = side.topic.Topic(side.participant, name, Plain)
    qos = side.core.Qos(P.Reliability.Reliable(side.util.duration(seconds=1)),
                        P.History.KeepAll, P.WriterDataLifecycle(autodispose=autodispose))
    writer = side.pub.DataWriter(side.participant, topic, qos=qos)
    reader = other.reader(name, "Plain")
    assert until(lambda: writer.get_matched_subscriptions() and reader.get_matched_publications())
    for i in range(2):
        writer.write(Plain(id=i, value=0.5, name="x"))
    assert until(lambda: len(reader.read(N=10)) == 2)
    del writer
    import gc
    gc.collect()
    expected = (other.core.InstanceState.NotAliveDisposed if autodispose
                else other.core.InstanceState.NotAliveNoWriters)
    states = {}

    def settled():
        for s in reader.take(N=10):
            states[s.sample_info.instance_handle] = s.sample_info.instance_state
        return len(states) == 2 and all(v == expected for v in states.values())
    assert until(settled, 15.0), states


def test_a_topic_of_another_type_at_cyclone_is_an_inconsistent_topic(sides):
    f, c = sides["ferrodds"], sides["cyclonedds"]
    heard = []

    class TopicListener(f.core.Listener):
        def on_inconsistent_topic(self, topic, status):
            heard.append((topic.get_name(), status.total_count, status.total_count_change))

    topic = f.topic.Topic(f.participant, "status_clash", f.types["Plain"],
                          listener=TopicListener())
    writer = f.pub.DataWriter(f.participant, topic, qos=f.qos())  # noqa: F841 (kept alive)
    first = topic.get_inconsistent_topic_status()
    assert (first.total_count, first.total_count_change) == (0, 0)
    c.reader("status_clash", "Point")
    assert until(lambda: heard)
    assert heard[0] == ("status_clash", 1, 1)
    s = topic.get_inconsistent_topic_status()
    assert (s.total_count, s.total_count_change) == (1, 0)  # the listener read it



def test_set_qos_announces_the_change_and_cyclone_takes_it_in(sides):
    """A writer's set_qos is announced again over SEDP: Cyclone's DCPSPublication built-in
    topic shows the new USER_DATA. (Cyclone takes in changes of the policies that are not
    request/offered and not PARTITION — ddsi_update_qos_locked leaves those out — so a
    partition moved by set_qos is followed by FerroDDS peers, not by Cyclone.)"""
    from cyclonedds.builtin import BuiltinDataReader, BuiltinTopicDcpsPublication
    f, c = sides["ferrodds"], sides["cyclonedds"]
    P = f.core.Policy
    publications = BuiltinDataReader(c.participant, BuiltinTopicDcpsPublication)

    def qos(user_data, depth=100):
        return f.core.Qos(P.Reliability.Reliable(f.util.duration(seconds=1)),
                          P.History.KeepLast(depth), P.Userdata(user_data))

    def seen_user_data():
        for s in publications.take(N=50):
            if s.topic_name == "status_set_qos":
                for p in s.qos:
                    if type(p).__name__ == "Userdata":
                        return p.data
        return None

    fwriter = f.pub.DataWriter(f.participant, f.topic.Topic(f.participant, "status_set_qos",
                                                            f.types["Plain"]), qos=qos(b"one"))
    assert until(seen_user_data) == b"one"
    fwriter.set_qos(qos(b"two"))
    assert until(seen_user_data) == b"two"
    assert fwriter.get_qos() is not None
    # A policy that may not change: an error naming it, and nothing announced.
    with pytest.raises(Exception, match="HISTORY"):
        fwriter.set_qos(qos(b"three", depth=5))
    time.sleep(0.3)
    assert seen_user_data() is None


def test_a_participants_set_qos_announces_its_user_data_and_cyclone_takes_it_in(sides):
    """A participant created with USER_DATA announces it; its set_qos announces the new
    bytes at once, and Cyclone's DCPSParticipant built-in topic shows them."""
    from cyclonedds.builtin import BuiltinDataReader, BuiltinTopicDcpsParticipant
    f, c = sides["ferrodds"], sides["cyclonedds"]
    P = f.core.Policy
    participants = BuiltinDataReader(c.participant, BuiltinTopicDcpsParticipant)
    fp = f.domain.DomainParticipant(DOMAIN, qos=f.core.Qos(P.Userdata(b"first")))
    key = fp.get_guid()

    def seen_user_data():
        found = None
        for s in participants.take(N=50):
            if int.from_bytes(s.key.bytes[:12], "big") == key >> 32:
                for p in s.qos:
                    if type(p).__name__ == "Userdata":
                        found = p.data
        return found

    assert until(seen_user_data) == b"first"
    fp.set_qos(f.core.Qos(P.Userdata(b"second")))
    assert until(seen_user_data, timeout=1.5) == b"second"
    assert fp.get_qos()["Userdata"].data == b"second"


def test_a_topics_set_qos_announces_its_topic_data_and_cyclone_takes_it_in(sides):
    """A topic's TOPIC_DATA goes out with its writers over SEDP, from its creation and
    after its set_qos, at once; Cyclone's DCPSPublication built-in topic shows it."""
    from cyclonedds.builtin import BuiltinDataReader, BuiltinTopicDcpsPublication
    f, c = sides["ferrodds"], sides["cyclonedds"]
    P = f.core.Policy
    publications = BuiltinDataReader(c.participant, BuiltinTopicDcpsPublication)

    def seen_topic_data():
        for s in publications.take(N=50):
            if s.topic_name == "status_topic_data":
                for p in s.qos:
                    if type(p).__name__ == "Topicdata":
                        return p.data
        return None

    topic = f.topic.Topic(f.participant, "status_topic_data", f.types["Plain"],
                          qos=f.core.Qos(P.Topicdata(b"first")))
    writer = f.pub.DataWriter(f.participant, topic, qos=f.qos())  # noqa: F841 (kept alive)
    assert until(seen_topic_data) == b"first"
    topic.set_qos(f.core.Qos(P.Topicdata(b"second")))
    assert until(seen_topic_data, timeout=1.5) == b"second"
    assert topic.get_qos()["Topicdata"].data == b"second"


def test_a_publishers_set_qos_moves_its_writers_to_the_readers_partition(sides):
    f = sides["ferrodds"]
    P = f.core.Policy
    qos = f.core.Qos(P.Reliability.Reliable(f.util.duration(seconds=1)), P.History.KeepLast(10))
    topic = f.topic.Topic(f.participant, "status_publisher_set_qos", f.types["Plain"])
    subscriber = f.sub.Subscriber(f.participant, qos=f.core.Qos(P.Partition(["there"])))
    reader = f.sub.DataReader(subscriber, topic, qos=qos)
    publisher = f.pub.Publisher(f.participant, qos=f.core.Qos(P.Partition(["here"])))
    writer = f.pub.DataWriter(publisher, topic, qos=qos)
    time.sleep(0.3)
    assert not writer.get_matched_subscriptions()
    publisher.set_qos(f.core.Qos(P.Partition(["there"])))
    assert publisher.get_qos() is not None
    assert until(lambda: writer.get_matched_subscriptions() and reader.get_matched_publications())
    writer.write(f.types["Plain"](7, 7.0, "moved"))
    taken = until(lambda: [s for s in reader.take(N=10) if s.sample_info.valid_data])
    assert [s.name for s in taken] == ["moved"]
    # A presentation other than the publisher's cannot be set.
    with pytest.raises(Exception, match="PRESENTATION"):
        publisher.set_qos(f.core.Qos(P.Partition(["there"]),
                                     P.PresentationAccessScope.Group(coherent_access=True,
                                                                     ordered_access=False)))
    # The subscriber leaves: the writer loses its reader.
    subscriber.set_qos(f.core.Qos(P.Partition(["gone"])))
    assert until(lambda: not writer.get_matched_subscriptions())
