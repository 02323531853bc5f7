"""``Subscriber`` and ``DataReader``, as cyclonedds.sub has them."""

import asyncio
import time
import weakref
from typing import AsyncGenerator, Generator, Generic, List, Optional, TypeVar

from .core import (_ChangeableQos, _GroupQos, Entity, InstanceState, InvalidSample,
                   Listener, Qos, QueryCondition, ReadCondition, SampleInfo, SampleState, ViewState,
                   _first_overriding, _native_qos, _READER_STATUSES, _listen_to_statuses,
                   _read_status)
from .util import _seconds

_T = TypeVar("_T")
_ANY = SampleState.Any | ViewState.Any | InstanceState.Any


class Subscriber(_GroupQos, Entity):
    """A subscriber: groups readers and gives them its partition and its
    ``Policy.PresentationAccessScope`` (``begin_coherent()`` ... ``end_coherent()`` reads
    its readers as one: coherent sets that complete meanwhile wait for the end)."""

    def __init__(self, domain_participant, qos: Optional[Qos] = None,
                 listener: Optional[Listener] = None):
        super().__init__(domain_participant, listener)
        self.qos = qos
        self._native = domain_participant._native.subscriber(_native_qos(qos))
        self._readers = weakref.WeakValueDictionary()

    def begin_coherent(self) -> None:
        """Begins access (DCPS ``begin_access``), as cyclonedds-python's does."""
        self._native.begin_access()

    def end_coherent(self) -> None:
        self._native.end_access()

    def get_datareaders(self) -> List["DataReader"]:
        """DCPS ``get_datareaders``: its readers, one entry per sample they hold, in the
        order that reading one sample from each in turn (``take(N=1)``) reads them in. With
        ``Policy.PresentationAccessScope.Group`` ordered access, samples of one publisher
        come in the order it wrote them, across its writers; call it between
        ``begin_coherent()`` and ``end_coherent()`` so that nothing arrives meanwhile."""
        readers = []
        for guid in self._native.datareaders():
            reader = self._readers.get(guid)
            if reader is not None:
                readers.append(reader)
        return readers

    def notify_readers(self) -> None:
        """Accepted for compatibility."""


class DataReader(_ChangeableQos, Entity, Generic[_T]):
    """Reads samples of a topic: ``DataReader(participant_or_subscriber, topic, qos=...,
    listener=...)``. ``take(N)`` and ``read(N)`` return samples with ``sample.sample_info``
    (or ``InvalidSample`` for a dispose or unregister)."""

    def __init__(self, subscriber_or_participant, topic, qos: Optional[Qos] = None,
                 listener: Optional[Listener] = None):
        participant = subscriber_or_participant.participant
        super().__init__(participant, listener)
        subscriber_qos = getattr(subscriber_or_participant, "qos", None) \
            if isinstance(subscriber_or_participant, Subscriber) else None
        self._topic = topic
        self.qos = qos
        self._subscriber = subscriber_or_participant \
            if isinstance(subscriber_or_participant, Subscriber) else None
        self._group = self._subscriber
        creator = subscriber_or_participant._native \
            if isinstance(subscriber_or_participant, Subscriber) else participant._native
        self._native = creator.reader(topic._native, _native_qos(topic.qos, subscriber_qos, qos))
        if self._subscriber is not None:
            self._subscriber._readers[self._native.guid] = self
        self._next_condition = None
        subscriber = subscriber_or_participant \
            if isinstance(subscriber_or_participant, Subscriber) else None
        parents = [subscriber.get_listener() if subscriber else None, participant.get_listener()]
        # DCPS: a subscriber's (or participant's) on_data_on_readers takes precedence over
        # the readers' on_data_available; otherwise the first listener that has one is called.
        on_readers = _first_overriding(parents, "on_data_on_readers")
        available = _first_overriding([listener] + parents, "on_data_available")
        if on_readers is not None or available is not None:
            # Through weak references: the native reader holds the callback, and a cycle
            # through Rust is one Python's collector cannot see, which would keep the
            # participant (and its threads) alive after the program let go of it.
            me = weakref.ref(self)
            group = weakref.ref(subscriber) if subscriber is not None else None

            def on_data_available():
                reader = me()
                if reader is None:
                    return
                if on_readers is not None:
                    target = group() if group is not None else None
                    on_readers.on_data_on_readers(target if target is not None else reader)
                else:
                    available.on_data_available(reader)
            self._native.set_data_available(on_data_available)
        _listen_to_statuses(self, [listener] + parents, _READER_STATUSES)

    @property
    def topic(self):
        return self._topic

    @staticmethod
    def _mask(condition) -> int:
        if isinstance(condition, (ReadCondition, QueryCondition)):
            return condition.mask
        return _ANY

    def read(self, N: int = 1, condition=None, instance_handle: Optional[int] = None) -> List[_T]:
        """Up to ``N`` of the samples ``condition`` (its state mask, and a QueryCondition's
        filter) and ``instance_handle`` select, left in the reader; they, and only they,
        become READ."""
        if condition is None:
            return self._native.read(N, _ANY, instance_handle)
        return self._native.read(N, self._mask(condition), instance_handle,
                                 self._filter(condition))

    def take(self, N: int = 1, condition=None, instance_handle: Optional[int] = None) -> List[_T]:
        """Up to ``N`` of the samples ``condition`` (its state mask, and a QueryCondition's
        filter) and ``instance_handle`` select, removed from the reader; the others stay."""
        if condition is None:
            return self._native.take(N, _ANY, instance_handle)
        return self._native.take(N, self._mask(condition), instance_handle,
                                 self._filter(condition))

    @staticmethod
    def _filter(condition):
        return condition.filter if isinstance(condition, QueryCondition) else None

    def _peek(self, mask: int) -> bool:
        return self._native.wait_for_data(0.0, mask)

    def read_next(self) -> Optional[_T]:
        """One sample not read yet, or None."""
        s = self.read(condition=ReadCondition(self, ViewState.Any | SampleState.NotRead
                                              | InstanceState.Alive))
        return s[0] if s else None

    def take_next(self) -> Optional[_T]:
        """One sample not read yet, removed, or None."""
        s = self.take(condition=ReadCondition(self, ViewState.Any | SampleState.NotRead
                                              | InstanceState.Alive))
        return s[0] if s else None

    def _iter(self, fn, condition, timeout) -> Generator[_T, None, None]:
        wait = _seconds(timeout)
        while True:
            while True:
                got = fn(N=1, condition=condition)
                if not got:
                    break
                yield got[0]
            if not self._native.wait_for_data(wait):
                break

    def read_iter(self, condition=None, timeout: Optional[int] = None):
        """Samples as they come; stops after ``timeout`` nanoseconds without one."""
        return self._iter(self.read, condition or ReadCondition(
            self, ViewState.Any | InstanceState.Alive | SampleState.NotRead), timeout)

    def take_iter(self, condition=None, timeout: Optional[int] = None):
        """Samples as they come, taken; stops after ``timeout`` nanoseconds without one."""
        return self._iter(self.take, condition, timeout)

    def read_one(self, condition=None, timeout: Optional[int] = None) -> _T:
        for s in self.read_iter(condition, timeout):
            return s
        raise TimeoutError()

    def take_one(self, condition=None, timeout: Optional[int] = None) -> _T:
        for s in self.take_iter(condition, timeout):
            return s
        raise TimeoutError()

    async def _aiter(self, fn, condition, timeout) -> AsyncGenerator[_T, None]:
        loop = asyncio.get_running_loop()
        wait = _seconds(timeout)
        while True:
            got = fn(N=1, condition=condition)
            if got:
                yield got[0]
                continue
            if not await loop.run_in_executor(None, self._native.wait_for_data, wait):
                break

    def read_aiter(self, condition=None, timeout: Optional[int] = None):
        return self._aiter(self.read, condition or ReadCondition(
            self, ViewState.Any | InstanceState.Alive | SampleState.NotRead), timeout)

    def take_aiter(self, condition=None, timeout: Optional[int] = None):
        return self._aiter(self.take, condition, timeout)

    def __aiter__(self):
        """``async for sample in reader``: samples as they come, taken."""
        return self.take_aiter()

    def __iter__(self):
        return self.take_iter()

    def wait_for_historical_data(self, timeout: int) -> bool:
        """TRANSIENT_LOCAL history arrives with the match; waits for a writer."""
        return self._native.wait_for_matched(1, _seconds(timeout))

    def get_matched_publications(self) -> List[int]:
        return self._native.matched()

    def get_subscription_matched_status(self):
        return _read_status(self, "subscription_matched")

    def get_requested_incompatible_qos_status(self):
        return _read_status(self, "requested_incompatible_qos")

    def get_requested_deadline_missed_status(self):
        return _read_status(self, "requested_deadline_missed")

    def get_sample_lost_status(self):
        return _read_status(self, "sample_lost")

    def get_liveliness_changed_status(self):
        return _read_status(self, "liveliness_changed")

    def get_sample_rejected_status(self):
        return _read_status(self, "sample_rejected")

    def _wait_for_matched(self, count: int = 1, timeout: Optional[int] = None) -> bool:
        return self._native.wait_for_matched(count, _seconds(timeout))


__all__ = ["Subscriber", "DataReader"]
