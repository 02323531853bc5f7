"""``Publisher`` and ``DataWriter``, as cyclonedds.pub has them."""

from typing import Generic, List, Optional, TypeVar

from .core import (_ChangeableQos, _GroupQos, Entity, Listener, Qos, _WRITER_STATUSES,
                   _listen_to_statuses, _native_qos, _read_status)
from .util import _seconds

_T = TypeVar("_T")


class Publisher(_GroupQos, Entity):
    """A publisher: groups writers and gives them its partition and its
    ``Policy.PresentationAccessScope`` (coherent sets: ``begin_coherent()`` ...
    ``end_coherent()``)."""

    def __init__(self, domain_participant, qos: Optional[Qos] = None,
                 listener: Optional[Listener] = None):
        super().__init__(domain_participant, listener)
        self.qos = qos
        self._writers = []
        self._native = domain_participant._native.publisher(_native_qos(qos))

    def begin_coherent(self) -> None:
        """Begins a coherent set: what the writers write until ``end_coherent()`` reaches
        readers with coherent access as one."""
        self._native.begin_coherent()

    def end_coherent(self) -> None:
        self._native.end_coherent()

    def wait_for_acks(self, timeout: int) -> bool:
        return all(w.wait_for_acks(timeout) for w in self._writers)

    def suspend(self) -> None:
        """Accepted for compatibility; FerroDDS sends at once."""

    def resume(self) -> None:
        for w in self._writers:
            w._native.flush()


class DataWriter(_ChangeableQos, Entity, Generic[_T]):
    """Writes samples of a topic: ``DataWriter(participant_or_publisher, topic, qos=...)``."""

    def __init__(self, publisher_or_participant, topic, qos: Optional[Qos] = None,
                 listener: Optional[Listener] = None):
        participant = publisher_or_participant.participant
        super().__init__(participant, listener)
        publisher_qos = getattr(publisher_or_participant, "qos", None) \
            if isinstance(publisher_or_participant, Publisher) else None
        self._topic = topic
        self.qos = qos
        self._publisher = publisher_or_participant \
            if isinstance(publisher_or_participant, Publisher) else None
        self._group = self._publisher
        creator = self._publisher._native if self._publisher else participant._native
        self._native = creator.writer(topic._native, _native_qos(topic.qos, publisher_qos, qos))
        if type(self).write is DataWriter.write:
            # The native write is all of `write` (same arguments): called directly, each
            # write saves a Python frame. A subclass's own `write` is left alone.
            self.write = self._native.write
        if self._publisher is not None:
            self._publisher._writers.append(self)
        _listen_to_statuses(self, [listener, self._publisher and self._publisher.get_listener(),
                                   participant.get_listener()], _WRITER_STATUSES)

    @property
    def topic(self):
        return self._topic

    def begin_coherent(self) -> None:
        """Its publisher's ``begin_coherent()``."""
        if self._publisher is not None:
            self._publisher.begin_coherent()

    def end_coherent(self) -> None:
        if self._publisher is not None:
            self._publisher.end_coherent()

    def write(self, sample: _T, timestamp: Optional[int] = None) -> None:
        """Writes ``sample`` (``timestamp`` in nanoseconds since the epoch)."""
        # The native write, dispose and unregister check the sample's type themselves.
        self._native.write(sample, timestamp)

    def write_dispose(self, sample: _T, timestamp: Optional[int] = None) -> None:
        """Writes ``sample`` and disposes its instance."""
        self.write(sample, timestamp)
        self.dispose(sample, timestamp)

    def dispose(self, sample: _T, timestamp: Optional[int] = None) -> None:
        """Disposes the instance of ``sample``."""
        self._native.dispose(sample)

    def register_instance(self, sample: _T) -> int:
        """The instance handle of ``sample`` (FerroDDS registers on first write)."""
        return self._native.instance_handle(sample)

    def unregister_instance(self, sample: _T, timestamp: Optional[int] = None) -> None:
        """Unregisters the instance of ``sample``."""
        self._native.unregister(sample)

    def lookup_instance(self, sample: _T) -> Optional[int]:
        return self._native.instance_handle(sample)

    def wait_for_acks(self, timeout: int) -> bool:
        """Waits (``timeout`` in nanoseconds) until matched reliable readers have it all."""
        return self._native.wait_for_acks(_seconds(timeout))

    def get_matched_subscriptions(self) -> List[int]:
        return self._native.matched()

    def get_publication_matched_status(self):
        return _read_status(self, "publication_matched")

    def get_offered_incompatible_qos_status(self):
        return _read_status(self, "offered_incompatible_qos")

    def get_offered_deadline_missed_status(self):
        return _read_status(self, "offered_deadline_missed")

    def get_liveliness_lost_status(self):
        return _read_status(self, "liveliness_lost")

    def assert_liveliness(self) -> None:
        """Asserts the writer's liveliness (MANUAL_BY_TOPIC and MANUAL_BY_PARTICIPANT
        writers; a write does too)."""
        self._native.assert_liveliness()

    def _wait_for_matched(self, count: int = 1, timeout: Optional[int] = None) -> bool:
        return self._native.wait_for_matched(count, _seconds(timeout))


__all__ = ["Publisher", "DataWriter"]
