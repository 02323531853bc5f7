"""``DomainParticipant``, as cyclonedds.domain has it."""

from typing import Optional

from . import _native
from .core import Entity, Listener, Qos


class DomainParticipant(Entity):
    """A participant in a DDS domain: ``DomainParticipant(0)``."""

    def __init__(self, domain_id: int = 0, qos: Optional[Qos] = None,
                 listener: Optional[Listener] = None):
        super().__init__(None, listener)
        self._participant = self
        self.qos = qos
        self._native = _native.Participant(int(domain_id), _user_data(qos))

    @property
    def domain_id(self) -> int:
        return self._native.domain_id

    def set_qos(self, qos: Qos) -> None:
        """Changes its QoS (DCPS ``set_qos``): ``Policy.Userdata``, announced to the other
        participants at once (absent: empty). Other policies of a participant are not
        acted on, as at creation."""
        self._native.set_user_data(_user_data(qos))
        self.qos = qos

    def get_qos(self) -> Optional[Qos]:
        """The QoS it was given (created with, or set since)."""
        return self.qos

    def assert_liveliness(self) -> None:
        """Asserts the liveliness of this participant's MANUAL_BY_PARTICIPANT writers."""
        self._native.assert_liveliness()

    def get_guid(self) -> int:
        """The participant's GUID, as an integer."""
        return self._native.guid

    def __repr__(self):
        return f"DomainParticipant(domain_id={self.domain_id})"


def _user_data(qos: Optional[Qos]) -> bytes:
    """The bytes of ``qos``'s ``Policy.Userdata`` (empty without one)."""
    if qos is None or "Userdata" not in qos:
        return b""
    return bytes(qos["Userdata"].data)


__all__ = ["DomainParticipant"]
