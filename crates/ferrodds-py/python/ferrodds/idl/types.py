"""IDL types for annotating members, named as in cyclonedds.idl.types: ``int32``,
``sequence[T]``, ``array[T, n]``, ``bounded_str[n]``, ``case[labels, T]``, ..."""

import typing as _t

try:  # Python 3.9 and newer
    from typing import Annotated
except ImportError:  # pragma: no cover - Python 3.8
    from typing_extensions import Annotated  # type: ignore

NoneType = type(None)

char = Annotated[str, "char"]
wchar = Annotated[str, "wchar"]
int8 = Annotated[int, "int8"]
int16 = Annotated[int, "int16"]
int32 = Annotated[int, "int32"]
int64 = Annotated[int, "int64"]
byte = Annotated[int, "byte"]
uint8 = Annotated[int, "uint8"]
uint16 = Annotated[int, "uint16"]
uint32 = Annotated[int, "uint32"]
uint64 = Annotated[int, "uint64"]
float32 = Annotated[float, "float32"]
float64 = Annotated[float, "float64"]


class _Holder:
    """What a subscripted IDL type keeps in its ``Annotated`` metadata."""

    __slots__ = ()

    def _key(self):
        return (type(self),) + tuple(_typed(getattr(self, s)) for s in self.__slots__)

    # typing caches ``Annotated[T, holder]`` by equality: values that are equal but of
    # different types (the labels True and 1) must not compare equal, or one union's
    # ``case[True, T]`` would come back for another's ``case[1, T]``.
    def __eq__(self, other):
        return type(self) is type(other) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())


def _typed(value):
    """``value`` with the type of each of its parts beside it, for comparisons."""
    if isinstance(value, tuple):
        return tuple(_typed(v) for v in value)
    return (type(value), value)


class sequence(_Holder):
    """``sequence[T]`` or ``sequence[T, bound]``: a list."""

    __slots__ = ("subtype", "max_length")

    def __init__(self, subtype, max_length=None):
        self.subtype = subtype
        self.max_length = max_length

    def __class_getitem__(cls, args):
        if isinstance(args, tuple):
            subtype, bound = args
        else:
            subtype, bound = args, None
        return Annotated[_t.List[subtype], cls(subtype, bound)]

    def __repr__(self):
        return f"sequence[{self.subtype!r}, {self.max_length}]"


class array(_Holder):
    """``array[T, length]``: a list of exactly ``length`` elements."""

    __slots__ = ("subtype", "length")

    def __init__(self, subtype, length):
        self.subtype = subtype
        self.length = length

    def __class_getitem__(cls, args):
        subtype, length = args
        return Annotated[_t.List[subtype], cls(subtype, length)]

    def __repr__(self):
        return f"array[{self.subtype!r}, {self.length}]"


class bounded_str(_Holder):
    """``bounded_str[n]``: a string of at most ``n`` bytes."""

    __slots__ = ("max_length",)

    def __init__(self, max_length):
        self.max_length = max_length

    def __class_getitem__(cls, max_length):
        return Annotated[str, cls(max_length)]


class typedef(_Holder):
    """``typedef["Name", T]``: another name for ``T``."""

    __slots__ = ("name", "subtype")

    def __init__(self, name, subtype):
        self.name = name
        self.subtype = subtype

    def __class_getitem__(cls, args):
        name, subtype = args
        return Annotated[subtype, cls(name, subtype)]


class ValidUnionHolder(_Holder):
    """A branch of a union."""

    __slots__ = ()


class case(ValidUnionHolder):
    """``case[label, T]`` or ``case[[l1, l2], T]``: the branch the labels select."""

    __slots__ = ("labels", "subtype")

    def __init__(self, labels, subtype):
        self.labels = tuple(labels) if isinstance(labels, (list, tuple)) else (labels,)
        self.subtype = subtype

    def __class_getitem__(cls, args):
        labels, subtype = args
        return Annotated[_t.Optional[subtype], cls(labels, subtype)]


class default(ValidUnionHolder):
    """``default[T]``: the branch every discriminator no case names selects."""

    __slots__ = ("subtype",)

    def __init__(self, subtype):
        self.subtype = subtype

    def __class_getitem__(cls, subtype):
        return Annotated[_t.Optional[subtype], cls(subtype)]


__all__ = [
    "char", "wchar", "int8", "int16", "int32", "int64", "byte", "uint8", "uint16", "uint32",
    "uint64", "float32", "float64", "sequence", "array", "bounded_str", "typedef", "case",
    "default", "NoneType", "ValidUnionHolder",
]
