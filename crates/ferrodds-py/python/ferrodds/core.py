"""Entities' common parts, QoS, states, listeners and conditions, named as in
cyclonedds.core (``Qos``, ``Policy``, ``Listener``, ``WaitSet``, ``ReadCondition``,
``SampleState``, ...)."""

import weakref
from dataclasses import dataclass
from typing import Any, List, Optional

from . import _native
from .util import _seconds, duration

DDSException = _native.DDSException


class SampleState:
    """Sample state bits (as cyclonedds.core.SampleState)."""
    Read = 1
    NotRead = 2
    Any = 3


class ViewState:
    """View state bits."""
    New = 4
    Old = 8
    Any = 12


class InstanceState:
    """Instance state bits."""
    Alive = 16
    NotAliveDisposed = 32
    NotAliveNoWriters = 64
    Any = 112


# What DDS says about a sample (``sample.sample_info``): sample_state, view_state,
# instance_state, valid_data, source_timestamp (ns since the epoch, or None),
# instance_handle, publication_handle. Native: readers build it with the sample.
SampleInfo = _native.SampleInfo


@dataclass
class InvalidSample:
    """A sample without data (a dispose or unregister): the key and the info."""
    key_sample: Any
    sample_info: SampleInfo


@dataclass
class PublicationMatchedStatus:
    """PUBLICATION_MATCHED: readers matched so far and now."""
    total_count: int
    total_count_change: int
    current_count: int
    current_count_change: int
    last_subscription_handle: int


@dataclass
class SubscriptionMatchedStatus:
    """SUBSCRIPTION_MATCHED: writers matched so far and now."""
    total_count: int
    total_count_change: int
    current_count: int
    current_count_change: int
    last_publication_handle: int


@dataclass
class OfferedIncompatibleQosStatus:
    """OFFERED_INCOMPATIBLE_QOS: readers refused for their QoS, and the last policy."""
    total_count: int
    total_count_change: int
    last_policy_id: int


@dataclass
class RequestedIncompatibleQosStatus:
    """REQUESTED_INCOMPATIBLE_QOS: writers refused for their QoS, and the last policy."""
    total_count: int
    total_count_change: int
    last_policy_id: int


@dataclass
class OfferedDeadlineMissedStatus:
    """OFFERED_DEADLINE_MISSED."""
    total_count: int
    total_count_change: int
    last_instance_handle: int


@dataclass
class RequestedDeadlineMissedStatus:
    """REQUESTED_DEADLINE_MISSED."""
    total_count: int
    total_count_change: int
    last_instance_handle: int


@dataclass
class InconsistentTopicStatus:
    """INCONSISTENT_TOPIC: remote endpoints found with the topic's name and another type."""
    total_count: int
    total_count_change: int


@dataclass
class SampleLostStatus:
    """SAMPLE_LOST."""
    total_count: int
    total_count_change: int


@dataclass
class SampleRejectedStatus:
    """SAMPLE_REJECTED: ``last_reason`` as DCPS numbers it (1 instances, 2 samples,
    3 samples per instance; 0 otherwise)."""
    total_count: int
    total_count_change: int
    last_reason: int
    last_instance_handle: int


@dataclass
class LivelinessChangedStatus:
    """LIVELINESS_CHANGED: matched writers alive and not alive now."""
    alive_count: int
    not_alive_count: int
    alive_count_change: int
    not_alive_count_change: int
    last_publication_handle: int


@dataclass
class LivelinessLostStatus:
    """LIVELINESS_LOST: times the writer did not assert its liveliness in time."""
    total_count: int
    total_count_change: int


_READER_STATUSES = ("subscription_matched", "requested_incompatible_qos",
                    "requested_deadline_missed", "sample_lost", "sample_rejected",
                    "liveliness_changed")
_WRITER_STATUSES = ("publication_matched", "offered_incompatible_qos",
                    "offered_deadline_missed", "liveliness_lost")


def _changed(status) -> bool:
    return bool(getattr(status, "total_count_change", 0)
                or getattr(status, "current_count_change", 0)
                or getattr(status, "alive_count_change", 0)
                or getattr(status, "not_alive_count_change", 0))


def _first_overriding(listeners, method: str):
    """The first of ``listeners`` (the entity's own, then its publisher's or subscriber's,
    then its participant's) that overrides ``method``: DCPS's fallback from an entity to its
    parents, as Cyclone DDS does it callback by callback."""
    for listener in listeners:
        if listener is not None and listener._overrides(method):
            return listener
    return None


def _listen_to_statuses(entity, listeners, names) -> None:
    """Calls ``listener.on_<status>(entity, status)`` when a status in ``names`` changes,
    ``listener`` the first of ``listeners`` (own first, then the parents) that overrides
    ``on_<status>``. The call reads the status, as DCPS says a listener call does: its
    ``*_change`` fields count from the last read."""
    if not isinstance(listeners, (list, tuple)):
        listeners = [listeners]
    wanted = {}
    for n in names:
        listener = _first_overriding(listeners, "on_" + n)
        if listener is not None:
            wanted[n] = listener
    if not wanted:
        return
    # A weak reference: the native entity holds the callback (see DataReader's
    # on_data_available).
    me = weakref.ref(entity)

    def on_status(name: str) -> None:
        e = me()
        if e is None or name not in wanted:
            return
        status = _read_status(e, name)
        if _changed(status):  # else a read since the change already reported it
            getattr(wanted[name], "on_" + name)(e, status)

    # A change before the listener was set (a match found while the entity was created) is
    # reported by this call, from this thread.
    entity._native.set_status_listener(on_status)


def _read_status(entity, name: str):
    """The status ``name`` of ``entity``, with its ``*_change`` fields counted since the
    last time it was read (DCPS: reading a status resets its changes)."""
    counts = entity._native.status(name)
    seen = entity.__dict__.setdefault("_status_seen", {})
    before = seen.get(name, (0, 0))
    total = counts[0]
    if name == "liveliness_changed":
        alive, not_alive = counts[0], counts[1]
        seen[name] = (alive, not_alive)
        return LivelinessChangedStatus(alive, not_alive, alive - before[0],
                                       not_alive - before[1], counts[2])
    if name in ("publication_matched", "subscription_matched"):
        current, last = counts[1], counts[2]
        seen[name] = (total, current)
        cls = PublicationMatchedStatus if name == "publication_matched" \
            else SubscriptionMatchedStatus
        return cls(total, total - before[0], current, current - before[1], last)
    seen[name] = (total, 0)
    change = total - before[0]
    if name == "inconsistent_topic":
        return InconsistentTopicStatus(total, change)
    if name == "offered_incompatible_qos":
        return OfferedIncompatibleQosStatus(total, change, counts[1])
    if name == "requested_incompatible_qos":
        return RequestedIncompatibleQosStatus(total, change, counts[1])
    if name == "offered_deadline_missed":
        return OfferedDeadlineMissedStatus(total, change, counts[1])
    if name == "requested_deadline_missed":
        return RequestedDeadlineMissedStatus(total, change, counts[1])
    if name == "sample_lost":
        return SampleLostStatus(total, change)
    if name == "liveliness_lost":
        return LivelinessLostStatus(total, change)
    return SampleRejectedStatus(total, change, counts[1], 0)


class _BasePolicy:
    __scope__ = ""

    def __eq__(self, other):
        return type(self) is type(other) and self.__dict__ == other.__dict__

    def __hash__(self):
        return hash((type(self), tuple(sorted(self.__dict__.items()))))

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items())
        return f"Policy.{self.__scope__}.{type(self).__name__}({args})"


def _policy(_scope, _name, _native, **fields):
    """A policy class whose instances take ``fields`` (in order) and give ``native``."""
    names = list(fields)

    def __init__(self, *args, **kwargs):
        values = dict(fields)
        values.update(zip(names, args))
        values.update(kwargs)
        self.__dict__.update(values)

    return type(_name, (_BasePolicy,), {"__init__": __init__, "__scope__": _scope,
                                        "_native": _native})


def _history_depth(history) -> int:
    """A History policy (or None: KEEP_LAST 1) as a depth, 0 for KEEP_ALL."""
    if history is None:
        return 1
    native = history._native()
    return 0 if native[1] is None else int(native[1])


def _singleton(scope, name, native):
    return _policy(scope, name, lambda self: native)()


class Policy:
    """The QoS policies (as cyclonedds.qos.Policy): ``Policy.Reliability.Reliable(
    max_blocking_time=duration(seconds=1))``, ``Policy.Durability.TransientLocal``,
    ``Policy.History.KeepLast(depth=10)``, ..."""

    class Reliability:
        BestEffort = _singleton("Reliability", "BestEffort", ("reliability", "best_effort", 0))
        Reliable = _policy("Reliability", "Reliable",
                           lambda self: ("reliability", "reliable", self.max_blocking_time),
                           max_blocking_time=duration(milliseconds=100))

    class Durability:
        Volatile = _singleton("Durability", "Volatile", ("durability", "volatile"))
        TransientLocal = _singleton("Durability", "TransientLocal",
                                    ("durability", "transient_local"))
        Transient = _singleton("Durability", "Transient", ("durability", "transient"))
        Persistent = _singleton("Durability", "Persistent", ("durability", "persistent"))

    class History:
        KeepAll = _singleton("History", "KeepAll", ("history", None))
        KeepLast = _policy("History", "KeepLast", lambda self: ("history", self.depth), depth=1)

    DurabilityService = _policy(
        "DurabilityService", "DurabilityService",
        lambda self: ("durability_service", self.cleanup_delay,
                      _history_depth(self.history), self.max_samples),
        cleanup_delay=0, history=None, max_samples=-1, max_instances=-1,
        max_samples_per_instance=-1)

    class PresentationAccessScope:
        Instance = _policy("PresentationAccessScope", "Instance",
                           lambda self: ("presentation", "instance", bool(self.coherent_access),
                                         bool(self.ordered_access)),
                           coherent_access=False, ordered_access=False)
        Topic = _policy("PresentationAccessScope", "Topic",
                        lambda self: ("presentation", "topic", bool(self.coherent_access),
                                      bool(self.ordered_access)),
                        coherent_access=False, ordered_access=False)
        Group = _policy("PresentationAccessScope", "Group",
                        lambda self: ("presentation", "group", bool(self.coherent_access),
                                      bool(self.ordered_access)),
                        coherent_access=False, ordered_access=False)

    ResourceLimits = _policy("ResourceLimits", "ResourceLimits",
                             lambda self: ("resource_limits", self.max_samples),
                             max_samples=-1, max_instances=-1, max_samples_per_instance=-1)
    Lifespan = _policy("Lifespan", "Lifespan", lambda self: ("lifespan", self.lifespan),
                       lifespan=0)
    Deadline = _policy("Deadline", "Deadline", lambda self: ("deadline", self.deadline),
                       deadline=0)
    LatencyBudget = _policy("LatencyBudget", "LatencyBudget",
                            lambda self: ("latency_budget", self.budget), budget=0)

    class Ownership:
        Shared = _singleton("Ownership", "Shared", ("ownership", None))
        Exclusive = _singleton("Ownership", "Exclusive", ("ownership_exclusive",))

    OwnershipStrength = _policy("OwnershipStrength", "OwnershipStrength",
                                lambda self: ("ownership_strength", self.strength), strength=0)

    class Liveliness:
        Automatic = _policy("Liveliness", "Automatic",
                            lambda self: ("liveliness", "automatic", self.lease_duration),
                            lease_duration=0x7FFFFFFFFFFFFFFF)
        ManualByParticipant = _policy(
            "Liveliness", "ManualByParticipant",
            lambda self: ("liveliness", "manual_by_participant", self.lease_duration),
            lease_duration=0x7FFFFFFFFFFFFFFF)
        ManualByTopic = _policy(
            "Liveliness", "ManualByTopic",
            lambda self: ("liveliness", "manual_by_topic", self.lease_duration),
            lease_duration=0x7FFFFFFFFFFFFFFF)

    ReaderDataLifecycle = _policy(
        "ReaderDataLifecycle", "ReaderDataLifecycle",
        lambda self: ("reader_data_lifecycle", self.autopurge_nowriter_samples_delay,
                      self.autopurge_disposed_samples_delay),
        autopurge_nowriter_samples_delay=0x7FFFFFFFFFFFFFFF,
        autopurge_disposed_samples_delay=0x7FFFFFFFFFFFFFFF)

    WriterDataLifecycle = _policy(
        "WriterDataLifecycle", "WriterDataLifecycle",
        lambda self: ("writer_data_lifecycle", bool(self.autodispose)), autodispose=True)

    TimeBasedFilter = _policy("TimeBasedFilter", "TimeBasedFilter",
                              lambda self: ("time_based_filter", self.filter_time),
                              filter_time=0)
    Partition = _policy("Partition", "Partition",
                        lambda self: ("partition", list(self.partitions)), partitions=())

    class DestinationOrder:
        ByReceptionTimestamp = _singleton("DestinationOrder", "ByReceptionTimestamp",
                                          ("destination_order", "reception"))
        BySourceTimestamp = _singleton("DestinationOrder", "BySourceTimestamp",
                                       ("destination_order", "source"))

    DataRepresentation = _policy("DataRepresentation", "DataRepresentation",
                                 lambda self: ("data_representation",
                                               ([0] if self.use_cdrv0_representation else [])
                                               + ([2] if self.use_xcdrv2_representation
                                                  else [])),
                                 use_cdrv0_representation=False,
                                 use_xcdrv2_representation=False)
    EntityName = _policy("EntityName", "EntityName", lambda self: ("entity_name", self.name),
                         name="")
    Userdata = _policy("Userdata", "Userdata", lambda self: ("user_data", self.data), data=b"")
    Topicdata = _policy("Topicdata", "Topicdata", lambda self: ("topic_data", self.data),
                        data=b"")
    Groupdata = _policy("Groupdata", "Groupdata", lambda self: ("group_data", self.data),
                        data=b"")


class Qos:
    """A set of policies, one per scope: ``Qos(Policy.Reliability.Reliable(
    duration(seconds=1)), Policy.History.KeepLast(10))``."""

    def __init__(self, *policies, base: Optional["Qos"] = None):
        self.policies = {}
        if base is not None:
            self.policies.update(base.policies)
        for p in policies:
            if not isinstance(p, _BasePolicy):
                raise TypeError(f"{p!r} is not a Policy")
            self.policies[p.__scope__] = p

    def __iter__(self):
        return iter(self.policies.values())

    def __contains__(self, item):
        scope = item.__scope__ if isinstance(item, _BasePolicy) else getattr(item, "__name__", item)
        return scope in self.policies

    def __getitem__(self, scope):
        name = scope if isinstance(scope, str) else getattr(scope, "__scope__", None) \
            or scope.__name__
        return self.policies[name]

    def __add__(self, other: "Qos") -> "Qos":
        return Qos(*other, base=self)

    def __eq__(self, other):
        return isinstance(other, Qos) and self.policies == other.policies

    def __repr__(self):
        return "Qos(" + ", ".join(repr(p) for p in self) + ")"

    def _native(self) -> List[tuple]:
        out = []
        strength = None
        exclusive = False
        for p in self:
            t = p._native()
            if t[0] == "ownership_exclusive":
                exclusive = True
            elif t[0] == "ownership_strength":
                strength = t[1]
            else:
                out.append(t)
        if exclusive:
            out.append(("ownership", strength or 0))
        return out


class _ChangeableQos:
    """``set_qos``/``get_qos`` of writers and readers (``_group``: the publisher or
    subscriber that made it, or None)."""

    def set_qos(self, qos: Qos) -> None:
        """Changes its QoS (DCPS ``set_qos``): only the policies DDS lets change may
        differ (deadline, latency budget, partition, user/topic/group data, lifespan,
        ownership strength, time-based filter, the data lifecycles); another change raises
        ``DDSException`` and changes nothing."""
        group_qos = getattr(self._group, "qos", None) if self._group is not None else None
        self._native.set_qos(_native_qos(self._topic.qos, group_qos, qos))
        self.qos = qos

    def get_qos(self) -> Optional[Qos]:
        """The QoS it was given (created with, or set since)."""
        return self.qos


class _GroupQos:
    """``set_qos``/``get_qos`` of publishers and subscribers."""

    def set_qos(self, qos: Qos) -> None:
        """Changes its QoS (DCPS ``set_qos``): its ``Policy.Partition`` moves the writers
        or readers it made and those it makes; its presentation may not change
        (``DDSException``)."""
        self._native.set_qos(_native_qos(qos))
        self.qos = qos

    def get_qos(self) -> Optional[Qos]:
        """The QoS it was given (created with, or set since)."""
        return self.qos


def _native_qos(*qoses) -> List[tuple]:
    """The policies of the QoS objects given (later ones win), for `_native`."""
    merged = Qos()
    for q in qoses:
        if q is not None:
            merged = merged + q
    return merged._native()


class Listener:
    """Callbacks for an entity's statuses: subclass it and override ``on_data_available``
    (``on_data_available(self, reader)``) and the other ``on_*`` methods, or pass them as
    keyword arguments."""

    def __init__(self, **kwargs):
        for name, fn in kwargs.items():
            if not name.startswith("on_"):
                raise TypeError(f"Listener takes on_* callbacks, not {name!r}")
            setattr(self, name, fn)

    def on_inconsistent_topic(self, topic, status) -> None:
        """A remote endpoint of ``topic``'s name has another type."""

    def on_data_available(self, reader) -> None:
        """Data arrived at ``reader``."""

    def on_data_on_readers(self, subscriber) -> None:
        """Data arrived at one of ``subscriber``'s readers (a subscriber's or participant's
        listener; it takes precedence over the readers' ``on_data_available``)."""

    def on_subscription_matched(self, reader, status) -> None:
        """``reader`` gained or lost a matched writer."""

    def on_publication_matched(self, writer, status) -> None:
        """``writer`` gained or lost a matched reader."""

    def on_requested_incompatible_qos(self, reader, status) -> None:
        """A writer was found whose QoS does not fit ``reader``."""

    def on_offered_incompatible_qos(self, writer, status) -> None:
        """A reader was found whose QoS does not fit ``writer``."""

    def on_requested_deadline_missed(self, reader, status) -> None:
        """An instance of ``reader`` went a deadline period without a sample."""

    def on_offered_deadline_missed(self, writer, status) -> None:
        """``writer`` went a deadline period without writing an instance."""

    def on_sample_lost(self, reader, status) -> None:
        """Samples for ``reader`` were lost on the way."""

    def on_liveliness_changed(self, reader, status) -> None:
        """A writer matched with ``reader`` became alive or not alive."""

    def on_liveliness_lost(self, writer, status) -> None:
        """``writer`` did not assert its liveliness within its lease."""

    def on_sample_rejected(self, reader, status) -> None:
        """Samples for ``reader`` were not stored."""

    def _overrides(self, name: str) -> bool:
        own = getattr(type(self), name, None)
        return name in self.__dict__ or own is not getattr(Listener, name, None)


class Entity:
    """What participants, topics, publishers, subscribers, readers and writers share."""

    def __init__(self, participant=None, listener: Optional[Listener] = None):
        self._participant = participant
        self._listener = listener
        self._closed = False

    @property
    def participant(self):
        return self._participant

    def get_listener(self) -> Optional[Listener]:
        return self._listener

    def close(self) -> None:
        """Deletes the entity (FerroDDS deletes it when the last reference goes)."""
        self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class _Condition(Entity):
    def __init__(self, reader, mask: int):
        super().__init__(reader.participant)
        self.reader = reader
        self.mask = mask

    def triggered(self) -> bool:
        return bool(self.reader._peek(self.mask))


class ReadCondition(_Condition):
    """Samples of ``reader`` whose states match ``mask`` (SampleState | ViewState |
    InstanceState bits)."""


class QueryCondition(_Condition):
    """A read condition with a filter: ``filter(sample) -> bool`` (ferrodds takes a
    Python callable where Cyclone takes one)."""

    def __init__(self, reader, mask: int, filter):
        super().__init__(reader, mask)
        self.filter = filter

    def triggered(self) -> bool:
        # A sample the mask selects and the filter keeps; no sample changes state.
        return self.reader._native.selects(self.mask, self.filter)


class GuardCondition(Entity):
    """A condition the application triggers."""

    def __init__(self, participant=None):
        super().__init__(participant)
        self._set = False

    def set(self, value: bool) -> None:
        self._set = value

    def read(self) -> bool:
        return self._set

    def take(self) -> bool:
        was, self._set = self._set, False
        return was

    def triggered(self) -> bool:
        return self._set


class WaitSet(Entity):
    """Waits for any of its conditions: ``ws.attach(ReadCondition(reader, mask))``,
    ``ws.wait(duration(seconds=1))`` returns the number triggered (0 on timeout)."""

    def __init__(self, participant=None):
        super().__init__(participant)
        self.conditions = []

    def attach(self, condition) -> None:
        if condition not in self.conditions:
            self.conditions.append(condition)

    def detach(self, condition) -> None:
        self.conditions.remove(condition)

    def is_attached(self, condition) -> bool:
        return condition in self.conditions

    def get_entities(self):
        return list(self.conditions)

    def _triggered(self) -> int:
        return sum(1 for c in self.conditions if c.triggered())

    def wait(self, timeout: Optional[int] = None) -> int:
        """Waits up to ``timeout`` nanoseconds; the number of triggered conditions."""
        conditions = self.conditions
        if len(conditions) == 1 and type(conditions[0]) is ReadCondition:
            # The common wait, on one reader: one call into the reader, which returns at
            # once when a sample the condition's mask selects is waiting.
            c = conditions[0]
            return c.reader._native.wait_triggered(timeout, c.mask)
        import time
        deadline = time.monotonic() + _seconds(timeout)
        readers = [c for c in self.conditions if isinstance(c, _Condition)]
        participants = {id(c.reader.participant) for c in readers}
        # Guard conditions are set from Python, which a wait in Rust does not see: with
        # one attached, the wait is cut in slices.
        slice_ = 0.05 if len(readers) < len(self.conditions) else None
        while True:
            n = self._triggered()
            if n:
                return n
            left = deadline - time.monotonic()
            if left <= 0:
                return 0
            step = left if slice_ is None else min(left, slice_)
            # Those whose mask selects nothing now (a query condition whose filter rejects
            # the samples its mask selects would end a wait at once).
            waitable = [c for c in readers if not c.reader._peek(c.mask)]
            if waitable and len(waitable) == len(readers) and len(participants) == 1:
                # One wait in Rust with the GIL released, on every reader at once, woken
                # only by their data.
                native = readers[0].reader.participant._native
                native.wait_for_any([(c.reader._native, c.mask) for c in waitable], step)
            elif waitable:
                # Readers of several participants, or samples a filter rejects: the first
                # reader waited on, the rest polled.
                waitable[0].reader._native.wait_for_data(min(step, 0.002), waitable[0].mask)
            else:
                time.sleep(min(step, 0.002))

    async def wait_async(self, timeout: Optional[int] = None) -> int:
        import asyncio
        return await asyncio.get_running_loop().run_in_executor(None, self.wait, timeout)


__all__ = [
    "DDSException", "SampleState", "ViewState", "InstanceState", "SampleInfo", "InvalidSample",
    "Policy", "Qos", "Listener", "Entity", "ReadCondition", "QueryCondition", "GuardCondition",
    "WaitSet", "duration", "PublicationMatchedStatus", "SubscriptionMatchedStatus",
    "OfferedIncompatibleQosStatus", "RequestedIncompatibleQosStatus", "InconsistentTopicStatus",
    "OfferedDeadlineMissedStatus", "RequestedDeadlineMissedStatus", "SampleLostStatus",
    "SampleRejectedStatus", "LivelinessChangedStatus", "LivelinessLostStatus",
]
