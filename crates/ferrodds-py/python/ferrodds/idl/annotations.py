"""Annotations, as cyclonedds.idl.annotations has them: ``key("name")`` and
``member_id("name", 5)`` inside a class body, ``@appendable`` / ``@mutable`` / ``@final``
on a class."""

from hashlib import md5 as _md5  # noqa: F401  (re-exported for hash ids' users)
from typing import Any, Callable, List, Optional

from ._scope import current_namespace


class AnnotationException(Exception):
    """An annotation used where it does not apply."""


def __field_annotate(field: str, annotation: str, value: Any) -> None:
    ns = current_namespace()
    if ns is None:
        raise AnnotationException(
            f"{annotation}({field!r}) must be called inside the body of an IDL class")
    if field not in ns["__annotations__"]:
        raise AnnotationException(
            f"{annotation}({field!r}): the class has no member {field!r} declared before it")
    ns["__idl_field_annotations__"].setdefault(field, {})[annotation] = value


def _annotate(cls, annotation: str, value: Any):
    cls.__idl_annotations__[annotation] = value
    cls.__ferrodds_support__ = None
    return cls


def key(apply_to: str) -> None:
    """Makes member ``apply_to`` a key (``@key``)."""
    __field_annotate(apply_to, "key", True)


def position(apply_to: str, value: int) -> None:
    """The bit position of a bitmask's flag (``@position``)."""
    __field_annotate(apply_to, "position", value)


def member_id(apply_to: str, value: int) -> None:
    """The member id of ``apply_to`` (``@id``)."""
    __field_annotate(apply_to, "id", value)


def member_name(apply_to: str, name: str) -> None:
    """The name a member has in IDL, where it differs from the Python attribute."""
    __field_annotate(apply_to, "name", name)


def member_hash_id(apply_to: str, value: Optional[str] = None) -> None:
    """The member id is the hash of ``value`` (or of the name) (``@hashid``)."""
    __field_annotate(apply_to, "hash_id", value)


def must_understand(apply_to: str) -> None:
    """``@must_understand``."""
    __field_annotate(apply_to, "must_understand", True)


def external(apply_to: str) -> None:
    """``@external`` (no effect on the encoding)."""
    __field_annotate(apply_to, "external", True)


def default_literal(value: Any) -> Callable[[str], None]:
    """``@default_literal`` of an enum's enumerator."""
    def apply(apply_to: str) -> None:
        __field_annotate(apply_to, "default_literal", value)
    return apply


def xcdrv2(cls):
    """Data representation XCDR2 only."""
    return _annotate(cls, "xcdrv2", True)


def cdrv0(cls):
    """Data representation XCDR1 only."""
    return _annotate(cls, "xcdrv2", False)


def nested(cls):
    """``@nested``: not a topic type."""
    return _annotate(cls, "nested", True)


def autoid(autoid_type: str):
    """``@autoid(SEQUENTIAL)`` or ``@autoid(HASH)``: how member ids are chosen."""
    if autoid_type not in ("sequential", "hash"):
        raise AnnotationException(f"autoid must be 'sequential' or 'hash', not {autoid_type!r}")

    def inner(cls):
        return _annotate(cls, "autoid", autoid_type)
    return inner


def extensibility(extensibility_type: str):
    """``@extensibility(FINAL|APPENDABLE|MUTABLE)``."""
    if extensibility_type not in ("final", "appendable", "mutable"):
        raise AnnotationException(
            f"extensibility must be 'final', 'appendable' or 'mutable', not {extensibility_type!r}")

    def inner(cls):
        return _annotate(cls, "extensibility", extensibility_type)
    return inner


def final(cls):
    """``@final``."""
    return _annotate(cls, "extensibility", "final")


def appendable(cls):
    """``@appendable``."""
    return _annotate(cls, "extensibility", "appendable")


def mutable(cls):
    """``@mutable``."""
    return _annotate(cls, "extensibility", "mutable")


def keylist(list_of_keys: List[str]):
    """The key members of a class, listed at once."""
    def inner(cls):
        return _annotate(cls, "keylist", list(list_of_keys))
    return inner


def bit_bound(amount: int):
    """``@bit_bound`` of an enum or a bitmask."""
    def inner(cls):
        return _annotate(cls, "bit_bound", amount)
    return inner


__all__ = [
    "AnnotationException", "key", "position", "member_id", "member_name", "member_hash_id",
    "must_understand", "external", "default_literal", "xcdrv2", "cdrv0", "nested", "autoid",
    "extensibility", "final", "appendable", "mutable", "keylist", "bit_bound",
]
