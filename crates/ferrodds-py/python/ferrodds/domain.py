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
        self._native = _native.Participant(int(domain_id))

    @property
    def domain_id(self) -> int:
        return self._native.domain_id

    def assert_liveliness(self) -> None:
        """Asserts the liveliness of this participant's MANUAL_BY_PARTICIPANT writers."""
        self._native.assert_liveliness()

    def get_guid(self) -> int:
        """The participant's GUID, as an integer."""
        return self._native.guid

    def __repr__(self):
        return f"DomainParticipant(domain_id={self.domain_id})"


__all__ = ["DomainParticipant"]
