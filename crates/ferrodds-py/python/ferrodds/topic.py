"""``Topic``, as cyclonedds.topic has it."""

from typing import Generic, Optional, TypeVar

from .core import (Entity, InconsistentTopicStatus, Listener, Qos, _listen_to_statuses,
                   _read_status)
from .idl import _support

_T = TypeVar("_T")


class Topic(Entity, Generic[_T]):
    """A named topic of an IDL type: ``Topic(participant, "Square", ShapeType)``."""

    def __init__(self, domain_participant, topic_name: str, data_type,
                 qos: Optional[Qos] = None, listener: Optional[Listener] = None):
        super().__init__(domain_participant, listener)
        self.data_type = data_type
        self.name = topic_name
        self.qos = qos
        self._native = domain_participant._native.topic(topic_name, _support(data_type))
        topic_data = _topic_data(qos)
        if topic_data:
            self._native.set_topic_data(topic_data)
        _listen_to_statuses(self, [listener, domain_participant.get_listener()],
                            ("inconsistent_topic",))

    def get_name(self) -> str:
        return self.name

    def set_qos(self, qos: Qos) -> None:
        """Changes its QoS (DCPS ``set_qos``): ``Policy.Topicdata``, which its writers and
        readers announce at once (absent: empty), and which those made later carry. Other
        policies of a topic are defaults for the writers and readers made from it later."""
        self._native.set_topic_data(_topic_data(qos))
        self.qos = qos

    def get_qos(self) -> Optional[Qos]:
        """The QoS it was given (created with, or set since)."""
        return self.qos

    def get_inconsistent_topic_status(self) -> InconsistentTopicStatus:
        """INCONSISTENT_TOPIC, its change counted since the last read."""
        return _read_status(self, "inconsistent_topic")

    def get_type_name(self) -> str:
        return self._native.type_name

    @property
    def typename(self) -> str:
        return self._native.type_name

    def __repr__(self):
        return f"Topic({self.name!r}, {self.data_type.__name__})"


def _topic_data(qos: Optional[Qos]) -> bytes:
    """The bytes of ``qos``'s ``Policy.Topicdata`` (empty without one)."""
    if qos is None or "Topicdata" not in qos:
        return b""
    return bytes(qos["Topicdata"].data)


__all__ = ["Topic"]
