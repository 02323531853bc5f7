"""IDL types as Python classes, as cyclonedds.idl declares them::

    @dataclass
    @appendable
    class Pose(IdlStruct, typename="geometry::Pose"):
        frame: str
        key("frame")
        x: float64

Each class becomes a FerroDDS runtime type the first time it is used (its type hints are
complete only once ``@dataclass`` and the module have run); serialization and
deserialization happen in Rust.
"""

import enum as _enum
import hashlib as _hashlib
import struct as _struct
import typing as _t
from typing import Any, Dict, Optional

from .. import _native
from . import _scope
from . import types as _types

__all__ = ["IdlStruct", "IdlUnion", "IdlEnum", "IdlBitmask", "IdlMeta", "IdlUnionMeta",
           "IdlEnumMeta", "IdlBitmaskMeta", "make_idl_struct", "make_idl_enum"]


class _IdlPrepared(type):
    """The part the struct, union and bitmask metaclasses share: the ``typename`` keyword,
    the namespace annotations go to, and the cached runtime type."""

    @classmethod
    def __prepare__(metacls, name, bases, **kwds):
        namespace = super().__prepare__(name, bases)
        namespace["__annotations__"] = {}
        namespace["__idl_annotations__"] = {}
        namespace["__idl_field_annotations__"] = {}
        if "typename" in kwds:
            namespace["__idl_typename__"] = kwds["typename"]
        for base in bases:
            if isinstance(base, _IdlPrepared):
                namespace["__annotations__"].update(getattr(base, "__annotations__", {}))
                namespace["__idl_annotations__"].update(base.__idl_annotations__)
                namespace["__idl_field_annotations__"].update(base.__idl_field_annotations__)
        _scope.enter(namespace)
        return namespace

    def __new__(metacls, name, bases, namespace, **kwds):
        _scope.leave()
        kwds.pop("typename", None)
        cls = super().__new__(metacls, name, bases, dict(namespace))
        if "__idl_typename__" not in namespace:
            cls.__idl_typename__ = name
        cls.__ferrodds_support__ = None
        return cls

    def __init__(cls, name, bases, namespace, **kwds):
        super().__init__(name, bases, namespace)


class IdlMeta(_IdlPrepared):
    """The metaclass of structs."""


class IdlUnionMeta(_IdlPrepared):
    """The metaclass of unions: takes ``discriminator=`` (and ``discriminator_is_key=``)."""

    def __new__(metacls, name, bases, namespace, **kwds):
        discriminator = kwds.pop("discriminator", None)
        kwds.pop("discriminator_is_key", None)
        cls = super().__new__(metacls, name, bases, namespace, **kwds)
        if discriminator is not None:
            cls.__idl_discriminator__ = discriminator
        return cls


class IdlBitmaskMeta(_IdlPrepared):
    """The metaclass of bitmasks."""


def _support(cls) -> "_native.TypeSupport":
    """The runtime type of an IDL class, built on first use."""
    support = cls.__dict__.get("__ferrodds_support__")
    if support is None:
        description, version_2 = _Describer().describe(cls)
        support = _native.TypeSupport(description)
        cls.__ferrodds_support__ = support
        cls.__ferrodds_version_2__ = version_2
    return support


class _SerializeMixin:
    """serialize / deserialize / JSON, shared by structs and unions."""

    def serialize(self, buffer=None, endianness=None, use_version_2: Optional[bool] = None) -> bytes:
        """The sample with its encapsulation header: XCDR2 where the type needs it
        (appendable, mutable, optional members), else XCDR1, as cyclonedds-python chooses."""
        support = _support(type(self))
        if use_version_2 is None:
            use_version_2 = type(self).__ferrodds_version_2__
        little = True if endianness is None else str(endianness).lower().endswith("little")
        return support.serialize(self, use_version_2, little)

    @classmethod
    def deserialize(cls, data, has_header: bool = True, use_version_2: Optional[bool] = None):
        """The sample in ``data`` (which starts with its encapsulation header)."""
        if not has_header:
            raise ValueError("ferrodds deserializes data with its encapsulation header only")
        return _support(cls).deserialize(bytes(data))

    def to_json(self) -> str:
        """The sample as JSON (FerroDDS's JSON view, as `ferrodds echo` prints)."""
        return _support(type(self)).to_json(self)

    @classmethod
    def from_json(cls, text: str):
        """The sample the JSON text describes."""
        return _support(cls).parse_json(text)


class IdlStruct(_SerializeMixin, metaclass=IdlMeta):
    """Base of IDL structs (declare them as dataclasses)."""


class IdlUnion(_SerializeMixin, metaclass=IdlUnionMeta):
    """Base of IDL unions: ``U(branch=value)``, or ``U(discriminator=d, value=v)``."""

    def __init__(self, **kwargs):
        self.discriminator = None
        self.value = None
        if "discriminator" in kwargs:
            self.discriminator = kwargs.pop("discriminator")
            self.value = kwargs.pop("value", None)
        for name, value in kwargs.items():
            setattr(self, name, value)

    @classmethod
    def _cases(cls) -> Dict[str, Any]:
        hints = _t.get_type_hints(cls, include_extras=True)
        return {n: _holder(h) for n, h in hints.items() if isinstance(_holder(h), _types.ValidUnionHolder)}

    def __setattr__(self, name, value):
        if name in ("discriminator", "value"):
            object.__setattr__(self, name, value)
            return
        holder = type(self)._cases().get(name)
        if holder is None:
            raise AttributeError(f"{type(self).__name__} has no branch {name!r}")
        if isinstance(holder, _types.case):
            d = holder.labels[0]
        else:
            d = _default_label(type(self))
        object.__setattr__(self, "discriminator", d)
        object.__setattr__(self, "value", value)

    def __getattr__(self, name):
        cases = type(self)._cases()
        if name not in cases:
            raise AttributeError(name)
        if self._branch_name() == name:
            return self.value
        return None

    def _branch_name(self) -> Optional[str]:
        default_name = None
        for name, holder in type(self)._cases().items():
            if isinstance(holder, _types.case) and self.discriminator in holder.labels:
                return name
            if isinstance(holder, _types.default):
                default_name = name
        return default_name

    def set(self, discriminator, value) -> None:
        """Sets the discriminator and the value."""
        object.__setattr__(self, "discriminator", discriminator)
        object.__setattr__(self, "value", value)

    def get(self):
        """The value."""
        return self.value

    @classmethod
    def _from_wire(cls, discriminator, value):
        obj = cls.__new__(cls)
        obj.set(discriminator, value)
        return obj

    def __eq__(self, other):
        return (type(self) is type(other) and self.discriminator == other.discriminator
                and self.value == other.value)

    def __hash__(self):
        return hash((type(self), self.discriminator, self.value))

    def __repr__(self):
        name = self._branch_name()
        if name is None:
            return f"{type(self).__name__}(discriminator={self.discriminator!r})"
        return f"{type(self).__name__}({name}={self.value!r})"


def _default_label(cls):
    """The discriminator the default branch is set with: a value no case label uses (IDL
    4.2, unions), the one cyclonedds-python picks where that is a valid value — counting down
    from -1 for signed integers, up from 0 for unsigned ones and characters (given as a
    one-character str), True before False for booleans. For an enum it is the first
    enumerator no label uses, a member of the enum: cyclonedds-python 11.0.1 takes the first
    integer that is no enumerator at all, which Cyclone DDS's C deserializer rejects."""
    used = set()
    for holder in cls._cases().values():
        if isinstance(holder, _types.case):
            used.update(_label(l) for l in holder.labels)
    d_type = getattr(cls, "__idl_discriminator__", None)
    kind = _holder(d_type)
    while isinstance(kind, _types.typedef):
        d_type = kind.subtype
        kind = _holder(d_type)
    if isinstance(d_type, type) and issubclass(d_type, _enum.Enum):
        for enumerator in d_type:
            if int(enumerator.value) not in used:
                return enumerator
        raise TypeError(f"{cls.__name__}: every {d_type.__name__} enumerator is a case label, "
                        "so no discriminator is left for the default branch")
    if d_type is bool:
        for value in (True, False):
            if int(value) not in used:
                return value
        raise TypeError(f"{cls.__name__}: every bool value is a case label, so no "
                        "discriminator is left for the default branch")
    step, d = (-1, -1) if kind in ("int8", "int16", "int32", "int64") or d_type is int else (1, 0)
    while d in used:
        d += step
    return chr(d) if kind in ("char", "wchar") else d


class IdlEnumMeta(_enum.EnumMeta):
    """The metaclass of enums: takes ``typename=`` and ``default=``."""

    @classmethod
    def __prepare__(metacls, name, bases, **kwds):
        return super().__prepare__(name, bases)

    def __new__(metacls, name, bases, namespace, **kwds):
        typename = kwds.pop("typename", None)
        kwds.pop("default", None)
        cls = super().__new__(metacls, name, bases, namespace, **kwds)
        cls.__idl_typename__ = typename or name
        if "__idl_annotations__" not in cls.__dict__:
            cls.__idl_annotations__ = {}
        cls.__ferrodds_support__ = None
        return cls


class IdlEnum(_enum.Enum, metaclass=IdlEnumMeta):
    """Base of IDL enums; ``auto()`` numbers enumerators from 0."""

    def _generate_next_value_(name, start, count, last_values):
        return count

    def __hash__(self) -> int:
        return hash(self.value)


class IdlBitmask(metaclass=IdlBitmaskMeta):
    """Base of IDL bitmasks: a dataclass of ``bool`` flags."""

    @classmethod
    def from_mask(cls, mask: int):
        """The bitmask whose set flags are the bits of ``mask``."""
        obj = cls()
        for name, position in _bitmask_flags(cls):
            setattr(obj, name, bool(mask >> position & 1))
        return obj

    def as_mask(self) -> int:
        """The flags as an integer."""
        return sum(1 << p for n, p in _bitmask_flags(type(self)) if getattr(self, n, False))

    def __eq__(self, other):
        return type(self) is type(other) and self.as_mask() == other.as_mask()


def _bitmask_flags(cls):
    field_annotations = getattr(cls, "__idl_field_annotations__", {})
    out, position = [], 0
    for name in _t.get_type_hints(cls):
        position = field_annotations.get(name, {}).get("position", position)
        out.append((name, position))
        position += 1
    return out


def _holder(hint):
    """The IDL metadata of an ``Annotated`` hint, or None."""
    for meta in getattr(hint, "__metadata__", ()):
        return meta
    return None


def _optional_inner(hint):
    """``T`` of ``Optional[T]``, or None."""
    if _t.get_origin(hint) is _t.Union:
        args = [a for a in _t.get_args(hint) if a is not type(None)]
        if len(args) == 1 and len(_t.get_args(hint)) == 2:
            return args[0]
    return None


_PRIMITIVES = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float32", "float64", "char", "wchar"}


class _Describer:
    """Turns an IDL class into the description `_native.TypeSupport` builds from, and
    finds whether its default data representation is XCDR2 (as cyclonedds-python does:
    when anything in it is appendable, mutable or optional)."""

    def __init__(self):
        self.version_2 = False
        self.active = set()

    def describe(self, cls):
        d = self.type(cls)
        annotations = getattr(cls, "__idl_annotations__", {})
        if "xcdrv2" in annotations:
            self.version_2 = bool(annotations["xcdrv2"])
        return d, self.version_2

    def type(self, hint):
        meta = _holder(hint)
        if isinstance(meta, str):
            if meta == "byte":
                return ("octet",)
            if meta in _PRIMITIVES:
                return (meta,)
            raise TypeError(f"unknown IDL type {meta!r}")
        if isinstance(meta, _types.sequence):
            return ("sequence", self.type(meta.subtype), meta.max_length)
        if isinstance(meta, _types.array):
            return ("array", self.type(meta.subtype), meta.length)
        if isinstance(meta, _types.bounded_str):
            return ("string", meta.max_length)
        if isinstance(meta, _types.typedef):
            return self.type(meta.subtype)
        if hint is bool:
            return ("bool",)
        if hint is int:
            return ("int64",)
        if hint is float:
            return ("float64",)
        if hint is str:
            return ("string", None)
        if hint is bytes:
            return ("bytes", None, False)
        if hint is bytearray:
            return ("bytes", None, True)
        if _t.get_origin(hint) is list:
            return ("sequence", self.type(_t.get_args(hint)[0]), None)
        if isinstance(hint, type):
            if issubclass(hint, IdlStruct):
                return self.struct(hint)
            if issubclass(hint, IdlUnion):
                return self.union(hint)
            if issubclass(hint, IdlEnum):
                return self.enum(hint)
            if issubclass(hint, IdlBitmask):
                return self.bitmask(hint)
        raise TypeError(f"{hint!r} is not an IDL type")

    def _enter(self, cls):
        if cls in self.active:
            raise TypeError(f"{cls.__name__} contains itself, which ferrodds cannot describe yet")
        self.active.add(cls)

    def _extensibility(self, cls):
        ext = cls.__idl_annotations__.get("extensibility", "final")
        if ext != "final":
            self.version_2 = True
        return ext

    def struct(self, cls):
        self._enter(cls)
        annotations = cls.__idl_annotations__
        field_annotations = cls.__idl_field_annotations__
        keylist = annotations.get("keylist", ())
        hash_ids = annotations.get("autoid", "sequential") == "hash"
        members, next_id = [], 0
        for name, hint in _t.get_type_hints(cls, include_extras=True).items():
            if name.startswith("__") or _t.get_origin(hint) is _t.ClassVar:
                continue
            fa = field_annotations.get(name, {})
            idl_name = fa.get("name", name)
            if "id" in fa:
                mid = fa["id"]
            elif "hash_id" in fa or hash_ids:
                digest = _hashlib.md5((fa.get("hash_id") or idl_name).encode()).digest()
                mid = _struct.unpack("<I", digest[:4])[0] & 0x0FFFFFFF
            else:
                mid = next_id
            next_id = mid + 1
            inner = _optional_inner(hint)
            optional = inner is not None
            if optional:
                self.version_2 = True
                hint = inner
            try:
                desc = self.type(hint)
            except TypeError as e:
                raise TypeError(f"{cls.__name__}.{name}: {e}") from None
            is_key = bool(fa.get("key")) or name in keylist
            # The IDL name goes on the wire (member hashes, TypeObjects, the JSON view); the
            # Python attribute is where the value lives.
            members.append((idl_name, name, mid, desc, is_key, optional,
                            bool(fa.get("must_understand"))))
        ext = self._extensibility(cls)
        self.active.discard(cls)
        return ("struct", cls, cls.__idl_typename__.replace(".", "::"), ext, members)

    def union(self, cls):
        self._enter(cls)
        discriminator = getattr(cls, "__idl_discriminator__", None)
        if discriminator is None:
            raise TypeError(f"union {cls.__name__} has no discriminator= in its class line")
        field_annotations = cls.__idl_field_annotations__
        cases = []
        for name, holder in cls._cases().items():
            idl_name = field_annotations.get(name, {}).get("name", name)
            try:
                desc = self.type(holder.subtype)
            except TypeError as e:
                raise TypeError(f"{cls.__name__}.{name}: {e}") from None
            if isinstance(holder, _types.case):
                labels = [_label(l) for l in holder.labels]
                cases.append((idl_name, name, labels, False, desc))
            else:
                cases.append((idl_name, name, [], True, desc))
        ext = self._extensibility(cls)
        self.active.discard(cls)
        return ("union", cls, cls.__idl_typename__.replace(".", "::"), ext,
                self.type(discriminator), cases)

    def enum(self, cls):
        bit_bound = cls.__idl_annotations__.get("bit_bound", 32)
        return ("enum", cls, cls.__idl_typename__.replace(".", "::"), bit_bound,
                [(m.name, int(m.value)) for m in cls])

    def bitmask(self, cls):
        bit_bound = cls.__idl_annotations__.get("bit_bound", 32)
        return ("bitmask", cls, cls.__idl_typename__.replace(".", "::"), bit_bound,
                _bitmask_flags(cls))


def _label(label) -> int:
    if isinstance(label, _enum.Enum):
        return int(label.value)
    if isinstance(label, bool):
        return int(label)
    if isinstance(label, str):
        return ord(label)
    return int(label)


def make_idl_struct(class_name: str, typename: str, fields: Dict[str, Any], *,
                    dataclassify=True, field_annotations=None, bases=()):
    """A struct class made at run time from ``{name: type}``."""
    from dataclasses import make_dataclass
    ns = {"__annotations__": dict(fields), "__idl_annotations__": {},
          "__idl_field_annotations__": dict(field_annotations or {}),
          "__idl_typename__": typename}
    cls = IdlMeta(class_name, (IdlStruct,) + tuple(bases), ns)
    if dataclassify:
        cls = make_dataclass(class_name, list(fields.items()), bases=(cls,))
        cls.__idl_typename__ = typename
        cls.__ferrodds_support__ = None
    return cls


def make_idl_enum(class_name: str, typename: str, fields: Dict[str, int], **kwargs):
    """An enum class made at run time from ``{name: value}``."""
    return IdlEnumMeta(class_name, (IdlEnum,), _enum_namespace(class_name, fields),
                       typename=typename)


def _enum_namespace(name, fields):
    ns = IdlEnumMeta.__prepare__(name, (IdlEnum,))
    for k, v in fields.items():
        ns[k] = v
    return ns
