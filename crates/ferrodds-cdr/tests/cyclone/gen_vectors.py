#!/usr/bin/env python3
"""Generate XCDR1/XCDR2 golden test vectors for ferrodds-cdr from Cyclone DDS Python.

Usage (from any directory; cyclonedds must already be installed, this script installs nothing):

    pip install cyclonedds==11.0.1
    python3 gen_vectors.py            # (re)writes vectors.json next to this script
    python3 gen_vectors.py --check    # regenerates in memory, exits 1 if vectors.json differs
    python3 gen_vectors.py --stdout   # prints the JSON to stdout instead of writing the file

What it does, for every sample of every type declared below:
  * serializes with the pure-Python cyclonedds.idl serializer: XCDR1 and XCDR2, little and
    big endian (each byte string includes the 4-byte encapsulation header);
  * deserializes every produced byte string again and asserts the result equals the sample;
  * hands every byte string to the Cyclone DDS C library (libddsc shipped in the wheel, through
    its ddsi_serdata_from_ser_iov, which runs dds_stream_normalize = the C deserializer's
    validator on the bytes) and records whether C accepted it ("c_accepts");
  * for keyed types asks the C library for the 16-byte key hash (ddsi_serdata_get_keyhash) of
    the XCDR2 sample ("key_hash") and of the XCDR1 sample ("key_hash_xcdr1"), and checks that
    "key_xcdr2_be" (the key-hash input this script builds with the library, see
    key_holder_bytes) pads/hashes to exactly the hash the C library computed.

The C library is only reached through a DomainParticipant that is confined to the loopback
interface with multicast disabled (CYCLONE_CONFIG below); no data is ever written.

See README.md next to this file for the JSON format and the encoding rules observed.
"""

import argparse
import base64
import ctypes as ct
import hashlib
import json
import math
import os
import sys
from dataclasses import dataclass
from enum import Enum
from typing import Optional

import cyclonedds
from cyclonedds.idl import types
from cyclonedds.idl import IdlStruct, IdlUnion, IdlEnum, IdlBitmask, make_idl_struct
from cyclonedds.idl.annotations import (key, final, appendable, mutable, member_id,
                                        must_understand, autoid, bit_bound)
from cyclonedds.idl.types import (int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                                  float32, float64, byte, char, array, sequence, bounded_str,
                                  case, default)
from cyclonedds.idl._support import Endianness
from cyclonedds.idl._type_normalize import (get_extended_type_hints, get_idl_annotations,
                                            get_idl_field_annotations)

# ---------------------------------------------------------------------------------------------
# Types (IDL module "vec").  typename "vec.X" is reported by the library as "vec::X".
# ---------------------------------------------------------------------------------------------


class Color(IdlEnum, typename="vec.Color"):
    RED = 0
    GREEN = 1
    BLUE = 2


@bit_bound(8)
class Small(IdlEnum, typename="vec.Small"):
    S_A = 0
    S_B = 1
    S_C = 2


@bit_bound(16)
@dataclass
class Flags(IdlBitmask, typename="vec.Flags"):
    F0: bool = False
    F1: bool = False
    F2: bool = False
    F3: bool = False


@final
@dataclass
class Point(IdlStruct, typename="vec.Point"):
    x: int32
    y: int32


@final
@dataclass
class Primitives(IdlStruct, typename="vec.Primitives"):
    b: bool
    o: byte            # IDL octet
    c: char
    i8: int8
    u8: uint8
    i16: int16
    u16: uint16
    i32: int32
    u32: uint32
    i64: int64
    u64: uint64
    f32: float32
    f64: float64


@final
@dataclass
class Strings(IdlStruct, typename="vec.Strings"):
    s: str
    bs: bounded_str[8]
    ss: sequence[str]
    # wstring: not supported by cyclonedds-python 11.0.1 (no wstring type) -> dropped


@final
@dataclass
class Collections(IdlStruct, typename="vec.Collections"):
    arr: array[int32, 3]
    grid: array[array[int16, 3], 2]
    pts: array[Point, 2]
    bytes: sequence[uint8]
    longs: sequence[int64]
    bounded_pts: sequence[Point, 4]
    nested: sequence[sequence[int16]]
    names: array[str, 2]


@final
@dataclass
class Enums(IdlStruct, typename="vec.Enums"):
    c: Color
    s: Small
    f: Flags
    cs: sequence[Color]


class U(IdlUnion, discriminator=int32, typename="vec.U"):
    a: case[[1, 2], int32]
    b: case[3, str]
    c: default[float64]


class UE(IdlUnion, discriminator=Color, typename="vec.UE"):
    r: case[Color.RED, int16]
    p: case[Color.BLUE, Point]


class UB(IdlUnion, discriminator=bool, typename="vec.UB"):
    # IDL: case TRUE: int32 t; case FALSE: string f;  cyclonedds-python 11.0.1 refuses a
    # boolean union whose labels cover both values ("No space in discriminated union for
    # default value"), so FALSE is expressed as the default branch: the bytes are identical.
    t: case[True, int32]
    f: default[str]


class UC(IdlUnion, discriminator=char, typename="vec.UC"):
    a: case['a', int64]
    b: case['b', byte]


@appendable
class UA(IdlUnion, discriminator=int16, typename="vec.UA"):
    one: case[1, int32]
    two: case[2, Point]


@final
@dataclass
class Unions(IdlStruct, typename="vec.Unions"):
    u1: U
    u2: UE
    u3: UB
    u4: UC
    tail: int8


@final
@dataclass
class UnionsApp(IdlStruct, typename="vec.UnionsApp"):
    # extra: carries the @appendable union UA inside a struct
    ua: UA
    tail: int8


@appendable
@dataclass
class Appendable(IdlStruct, typename="vec.Appendable"):
    id: int32
    key("id")
    name: str
    p: Point
    pts: sequence[Point]


@mutable
@dataclass
class Mutable(IdlStruct, typename="vec.Mutable"):
    id: int32
    key("id")
    name: str
    member_id("name", 10)
    value: float64
    opt: Optional[int32]
    opt_s: Optional[str]
    data: sequence[uint8]
    mu: int16
    must_understand("mu")
    app: Appendable


@mutable
@dataclass
class MutableKinds(IdlStruct, typename="vec.MutableKinds"):
    # extra (not in the brief): one member of each kind, to pin the XCDR2 EMHEADER length codes
    b: bool
    s: Small
    f: Flags
    c: Color
    s16: sequence[int16]
    s32: sequence[int32]
    ss: sequence[str]
    arr: array[int32, 2]
    parr: array[Point, 2]
    u: U
    pt: Point
    ch: char


@mutable
@autoid("hash")
@dataclass
class Hashed(IdlStruct, typename="vec.Hashed"):
    a: int32
    b: str
    c: int64


@final
@dataclass
class FinalOptionals(IdlStruct, typename="vec.FinalOptionals"):
    a: int32
    b: Optional[int32]
    c: Optional[str]
    d: Optional[Point]
    e: Optional[float64]


@appendable
@dataclass
class AppOptionals(IdlStruct, typename="vec.AppOptionals"):
    a: int8
    b: Optional[int64]
    c: Optional[str]


@final
@dataclass
class BaseF(IdlStruct, typename="vec.BaseF"):
    id: int32
    key("id")
    a: int16


@final
@dataclass
class DerivedF(BaseF, typename="vec.DerivedF"):
    b: str
    c: float64


@appendable
@dataclass
class BaseA(IdlStruct, typename="vec.BaseA"):
    id: int32
    key("id")
    a: int16


@appendable
@dataclass
class DerivedA(BaseA, typename="vec.DerivedA"):
    b: str


@mutable
@dataclass
class BaseM(IdlStruct, typename="vec.BaseM"):
    id: int32
    key("id")
    a: int16


@mutable
@dataclass
class DerivedM(BaseM, typename="vec.DerivedM"):
    b: str


@final
@dataclass
class KeySmall(IdlStruct, typename="vec.KeySmall"):
    id: int32
    key("id")
    x: int64
    key("x")
    v: int32


@final
@dataclass
class KeyBounded(IdlStruct, typename="vec.KeyBounded"):
    id: int32
    key("id")
    name: bounded_str[12]
    key("name")
    v: int32


@appendable
@dataclass
class KeyString(IdlStruct, typename="vec.KeyString"):
    name: str
    key("name")
    v: float64


@final
@dataclass
class KeyNested(IdlStruct, typename="vec.KeyNested"):
    p: Point
    key("p")
    tag: byte
    key("tag")
    other: str


@final
@dataclass
class Nested(IdlStruct, typename="vec.Nested"):
    a: Appendable
    m: Mutable
    sa: sequence[Appendable]
    fo: FinalOptionals


@appendable
@dataclass
class KeyedPayload(IdlStruct, typename="vec.KeyedPayload"):
    id: int32
    key("id")
    payload: sequence[uint8]


@final
@dataclass
class Align(IdlStruct, typename="vec.Align"):
    a: int8
    b: int64
    c: int8
    d: float64
    e: float32


@appendable
@dataclass
class AlignApp(IdlStruct, typename="vec.AlignApp"):
    a: int8
    b: int64


@mutable
@dataclass
class AlignMut(IdlStruct, typename="vec.AlignMut"):
    a: int8
    b: int64
    c: sequence[int64]


# ---------------------------------------------------------------------------------------------
# Samples
# ---------------------------------------------------------------------------------------------

I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1
U64_MAX = (1 << 64) - 1
I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1

P = Point
APP1 = Appendable(id=7, name="app", p=P(1, -1), pts=[P(2, 3)])
APP0 = Appendable(id=0, name="", p=P(0, 0), pts=[])
MUT_FULL = Mutable(id=1, name="mut", value=1.5, opt=-5, opt_s="o", data=[1, 2, 3], mu=-2, app=APP1)
MUT_ABSENT = Mutable(id=2, name="", value=-2.25, opt=None, opt_s=None, data=[], mu=0, app=APP0)
FO_ALL = FinalOptionals(a=1, b=2, c="c", d=P(3, 4), e=1.5)
FO_NONE = FinalOptionals(a=-1, b=None, c=None, d=None, e=None)

SAMPLES = [
    ("point_basic", Point(x=1, y=-2)),
    ("point_extremes", Point(x=I32_MIN, y=I32_MAX)),

    ("primitives_zero", Primitives(b=False, o=0, c='\0', i8=0, u8=0, i16=0, u16=0, i32=0, u32=0,
                                   i64=0, u64=0, f32=0.0, f64=0.0)),
    ("primitives_max", Primitives(b=True, o=255, c='z', i8=127, u8=255, i16=32767, u16=65535,
                                  i32=I32_MAX, u32=(1 << 32) - 1, i64=I64_MAX, u64=U64_MAX,
                                  f32=1.5, f64=-2.25)),
    ("primitives_min", Primitives(b=True, o=1, c='A', i8=-128, u8=1, i16=-32768, u16=1,
                                  i32=I32_MIN, u32=1, i64=I64_MIN, u64=1, f32=-2.25,
                                  f64=0.125)),

    ("strings_empty", Strings(s="", bs="", ss=[])),
    ("strings_values", Strings(s="hello", bs="abcdefgh", ss=["a", "", "xyz"])),
    ("strings_utf8", Strings(s="h\u00e9llo\u20ac", bs="12345", ss=["\u00fc"])),

    ("collections_empty", Collections(arr=[0, 0, 0], grid=[[0, 0, 0], [0, 0, 0]],
                                      pts=[P(0, 0), P(0, 0)], bytes=[], longs=[],
                                      bounded_pts=[], nested=[], names=["", ""])),
    ("collections_values", Collections(arr=[1, -2, 3], grid=[[1, 2, 3], [-4, -5, -6]],
                                       pts=[P(1, 2), P(3, 4)], bytes=[0, 1, 255],
                                       longs=[I64_MIN, 0, I64_MAX],
                                       bounded_pts=[P(5, 6), P(7, 8), P(9, 10), P(11, 12)],
                                       nested=[[1], [], [2, 3]], names=["ab", "c"])),

    ("enums_first", Enums(c=Color.RED, s=Small.S_A, f=Flags.from_mask(0), cs=[])),
    ("enums_values", Enums(c=Color.BLUE, s=Small.S_C, f=Flags.from_mask(0b1010),
                           cs=[Color.GREEN, Color.BLUE, Color.RED])),

    ("u_case_1", U(discriminator=1, value=-7)),
    ("u_case_2", U(discriminator=2, value=I32_MAX)),
    ("u_case_string", U(discriminator=3, value="str")),
    ("u_default_explicit", U(discriminator=7, value=1.5)),
    ("u_default_implicit", U(c=-2.25)),  # discriminator chosen by the library (-1)
    ("ue_red", UE(discriminator=Color.RED, value=-3)),
    ("ue_blue", UE(discriminator=Color.BLUE, value=P(1, 2))),
    ("ue_green_no_branch", UE(discriminator=Color.GREEN, value=None)),
    ("ub_true", UB(discriminator=True, value=42)),
    ("ub_false", UB(discriminator=False, value="no")),
    ("uc_a", UC(discriminator='a', value=-1)),
    ("uc_b", UC(discriminator='b', value=200)),
    ("uc_unknown_disc", UC(discriminator='z', value=None)),
    ("ua_one", UA(discriminator=1, value=5)),
    ("ua_two", UA(discriminator=2, value=P(-1, -2))),

    ("unions_mix", Unions(u1=U(discriminator=3, value="abc"),
                          u2=UE(discriminator=Color.BLUE, value=P(5, 6)),
                          u3=UB(discriminator=True, value=1),
                          u4=UC(discriminator='a', value=I64_MAX), tail=-1)),
    ("unions_defaults", Unions(u1=U(discriminator=9, value=-2.25),
                               u2=UE(discriminator=Color.GREEN, value=None),
                               u3=UB(discriminator=False, value=""),
                               u4=UC(discriminator='z', value=None), tail=127)),
    ("unions_app_one", UnionsApp(ua=UA(discriminator=1, value=-9), tail=3)),
    ("unions_app_two", UnionsApp(ua=UA(discriminator=2, value=P(7, 8)), tail=4)),

    ("appendable_basic", APP1),
    ("appendable_empty", APP0),

    ("mutable_full", MUT_FULL),
    ("mutable_absent_optionals", MUT_ABSENT),

    ("mutable_kinds", MutableKinds(b=True, s=Small.S_B, f=Flags.from_mask(0b1001), c=Color.GREEN,
                                   s16=[-1, 2, -3], s32=[4, -5], ss=["x", "yz"], arr=[6, -7],
                                   parr=[P(1, 2), P(3, 4)], u=U(discriminator=3, value="u"),
                                   pt=P(-8, 9), ch='q')),
    ("mutable_kinds_empty", MutableKinds(b=False, s=Small.S_A, f=Flags.from_mask(0), c=Color.RED,
                                         s16=[], s32=[], ss=[], arr=[0, 0], parr=[P(0, 0), P(0, 0)],
                                         u=U(discriminator=1, value=0), pt=P(0, 0), ch='\0')),

    ("hashed_basic", Hashed(a=1, b="b", c=-1)),
    ("hashed_empty", Hashed(a=0, b="", c=0)),

    ("final_optionals_all", FO_ALL),
    ("final_optionals_none", FO_NONE),
    ("final_optionals_some", FinalOptionals(a=5, b=None, c="xy", d=None, e=-2.25)),

    ("app_optionals_all", AppOptionals(a=-1, b=I64_MIN, c="s")),
    ("app_optionals_none", AppOptionals(a=1, b=None, c=None)),

    ("derived_f", DerivedF(id=1, a=-1, b="df", c=1.5)),
    ("derived_a", DerivedA(id=2, a=-2, b="da")),
    ("derived_m", DerivedM(id=3, a=-3, b="dm")),
    ("base_f", BaseF(id=1, a=-1)),
    ("base_a", BaseA(id=2, a=-2)),
    ("base_m", BaseM(id=3, a=-3)),

    ("key_small_basic", KeySmall(id=1, x=-2, v=3)),
    ("key_small_max", KeySmall(id=I32_MAX, x=I64_MAX, v=0)),
    ("key_bounded_short", KeyBounded(id=1, name="ab", v=9)),
    ("key_bounded_full", KeyBounded(id=2, name="abcdefghijkl", v=-9)),
    ("key_bounded_empty", KeyBounded(id=0, name="", v=0)),
    ("key_string_basic", KeyString(name="abc", v=1.5)),
    ("key_string_empty", KeyString(name="", v=0.0)),
    ("key_string_long", KeyString(name="a fairly long key string", v=-2.25)),
    ("key_nested_basic", KeyNested(p=P(1, 2), tag=3, other="ignored")),
    ("key_nested_neg", KeyNested(p=P(-1, I32_MIN), tag=255, other="")),

    ("nested_full", Nested(a=APP1, m=MUT_FULL, sa=[APP1, APP0], fo=FO_ALL)),
    ("nested_minimal", Nested(a=APP0, m=MUT_ABSENT, sa=[], fo=FO_NONE)),

    ("keyed_payload_0", KeyedPayload(id=1, payload=[])),
    ("keyed_payload_7", KeyedPayload(id=2, payload=list(range(1, 8)))),
    ("keyed_payload_64", KeyedPayload(id=3, payload=[(i * 7 + 3) & 0xff for i in range(64)])),

    ("align_basic", Align(a=1, b=-2, c=3, d=1.5, e=-2.25)),
    ("align_app_basic", AlignApp(a=-1, b=I64_MAX)),
    ("align_mut_basic", AlignMut(a=1, b=-2, c=[3, -4])),
    ("align_mut_empty", AlignMut(a=0, b=0, c=[])),
]

# ---------------------------------------------------------------------------------------------
# JSON view (the contract with the Rust JSON view, see README.md)
# ---------------------------------------------------------------------------------------------


def union_branch(u):
    """(discriminator as serialized, active branch name or None, value)."""
    t = type(u)
    disc, val = u.get()
    if disc is None:
        disc = t.__idl_default_discriminator__
    if disc in t.__idl_cases__:
        name = t.__idl_cases__[disc][0]
    elif t.__idl_default__ is not None:
        name = t.__idl_default__[0]
    else:
        name = None
    return disc, name, val


def is_octet_sequence(hint):
    """Whether a member's annotation is sequence[uint8] or sequence[byte] (base64 in JSON)."""
    return isinstance(hint, types.sequence) and hint.subtype in (uint8, byte)


def to_json(v, hint=None):
    if v is None:
        return None
    if hint is not None and is_octet_sequence(hint):
        return base64.b64encode(bytes(v)).decode("ascii")
    if isinstance(v, IdlStruct):
        return {name: to_json(getattr(v, name), hint)
                for name, hint in get_extended_type_hints(type(v)).items()}
    if isinstance(v, IdlUnion):
        disc, name, val = union_branch(v)
        out = {"discriminator": to_json(disc)}
        if name is not None:
            out[name] = to_json(val)
        return out
    if isinstance(v, Enum):
        return v.name
    if isinstance(v, IdlBitmask):
        return v.as_mask()
    if isinstance(v, (list, tuple, bytes, bytearray)):
        return [to_json(x) for x in v]
    if isinstance(v, float):
        assert math.isfinite(v)
        return v
    if isinstance(v, (bool, int, str)):
        return v
    raise TypeError(f"no JSON view for {v!r}")


def scoped_name(t):
    return t.__idl_typename__.replace(".", "::")


# ---------------------------------------------------------------------------------------------
# Key hash input ("key holder"): key leaves flattened, in member-id order, serialized as a
# @final struct by the library itself (this is what Cyclone's C keyhash code hashes).
# ---------------------------------------------------------------------------------------------


def member_ids(t):
    t.__idl__.populate()
    return t.__idl__.member_ids


def key_leaves(t):
    hints = get_extended_type_hints(t)
    fann = get_idl_field_annotations(t)
    keylist = get_idl_annotations(t).get("keylist") or [n for n in hints if fann.get(n, {}).get("key")]
    names = keylist if keylist else list(hints)
    mids = member_ids(t)
    names = sorted(names, key=lambda n: mids[n])
    out = []
    for n in names:
        ft = hints[n]
        if isinstance(ft, type) and issubclass(ft, IdlStruct):
            out += key_leaves(ft)
        elif isinstance(ft, type) and issubclass(ft, IdlUnion):
            raise NotImplementedError("union key members")
        else:
            out.append(ft)
    return out


def key_leaf_values(t, v):
    hints = get_extended_type_hints(t)
    fann = get_idl_field_annotations(t)
    keylist = get_idl_annotations(t).get("keylist") or [n for n in hints if fann.get(n, {}).get("key")]
    names = keylist if keylist else list(hints)
    mids = member_ids(t)
    out = []
    for n in sorted(names, key=lambda n: mids[n]):
        ft = hints[n]
        if isinstance(ft, type) and issubclass(ft, IdlStruct):
            out += key_leaf_values(ft, getattr(v, n))
        else:
            out.append(getattr(v, n))
    return out


_holders = {}


def key_holder_bytes(t, v, version2):
    if t not in _holders:
        fields = {f"k{i}": ft for i, ft in enumerate(key_leaves(t))}
        _holders[t] = final(make_idl_struct(f"KeyHolder_{t.__name__}", f"keyholder.{t.__name__}", fields))
    h = _holders[t]
    vals = key_leaf_values(t, v)
    obj = h(**{f"k{i}": x for i, x in enumerate(vals)})
    return h.__idl__.serialize(obj, use_version_2=version2, endianness=Endianness.Big, prepend_header=False)


def has_key(t):
    if not (isinstance(t, type) and issubclass(t, IdlStruct)):
        return False
    fann = get_idl_field_annotations(t)
    get_extended_type_hints(t)
    return bool(get_idl_annotations(t).get("keylist")) or any(a.get("key") for a in fann.values())


# ---------------------------------------------------------------------------------------------
# Cyclone DDS C library access (validation + key hash)
# ---------------------------------------------------------------------------------------------

CYCLONE_DOMAIN_ID = 77
CYCLONE_CONFIG = (
    '<CycloneDDS><Domain id="any">'
    '<General><Interfaces><NetworkInterface name="lo"/></Interfaces>'
    '<AllowMulticast>false</AllowMulticast></General>'
    '<Discovery><ParticipantIndex>auto</ParticipantIndex>'
    '<Peers><Peer address="127.0.0.1"/></Peers></Discovery>'
    '</Domain></CycloneDDS>'
)

SDK_DATA = 2


class _IOV(ct.Structure):
    _fields_ = [("base", ct.c_void_p), ("len", ct.c_size_t)]


class _Stream(ct.Structure):
    # dds_istream_t / dds_ostream_t (dds_ostreamLE_t, dds_ostreamBE_t wrap the same layout)
    _fields_ = [("buf", ct.c_void_p), ("size", ct.c_uint32), ("index", ct.c_uint32),
                ("xcdr_version", ct.c_uint32)]


class _CdrstreamDesc(ct.Structure):
    # struct dds_cdrstream_desc (dds/cdr/dds_cdrstream.h, Cyclone DDS 11.0)
    _fields_ = [("size", ct.c_uint32), ("align", ct.c_uint32), ("flagset", ct.c_uint32),
                ("nkeys", ct.c_uint32), ("keys", ct.c_void_p), ("keys_definition_order", ct.c_void_p),
                ("nops", ct.c_uint32), ("ops", ct.c_void_p), ("opt_size_xcdr1", ct.c_size_t),
                ("opt_size_xcdr2", ct.c_size_t), ("mid_table", ct.c_void_p), ("mid_op0", ct.c_void_p)]


class CLayer:
    """Thin ctypes access to the Cyclone DDS C library that ships in the cyclonedds wheel."""

    def __init__(self):
        from cyclonedds.domain import Domain, DomainParticipant
        from cyclonedds.internal import load_cyclonedds
        from cyclonedds._clayer import ddspy_calc_key
        self._calc_key = ddspy_calc_key
        self.domain = Domain(CYCLONE_DOMAIN_ID, CYCLONE_CONFIG)
        self.dp = DomainParticipant(CYCLONE_DOMAIN_ID)
        lib = load_cyclonedds()
        S = ct.POINTER(_Stream)
        sigs = {
            "dds_get_entity_sertype": ([ct.c_int32, ct.POINTER(ct.c_void_p)], ct.c_int32),
            "ddsi_serdata_from_ser_iov": ([ct.c_void_p, ct.c_int, ct.c_size_t, ct.POINTER(_IOV), ct.c_size_t], ct.c_void_p),
            "ddsi_serdata_get_keyhash": ([ct.c_void_p, ct.c_char_p, ct.c_bool], None),
            "ddsi_serdata_unref": ([ct.c_void_p], None),
            "dds_istream_init": ([S, ct.c_uint32, ct.c_void_p, ct.c_uint32], None),
            "dds_ostreamLE_init": ([S, ct.c_void_p, ct.c_uint32, ct.c_uint32], None),
            "dds_ostreamBE_init": ([S, ct.c_void_p, ct.c_uint32, ct.c_uint32], None),
            "dds_ostreamLE_fini": ([S, ct.c_void_p], None),
            "dds_ostreamBE_fini": ([S, ct.c_void_p], None),
            "dds_stream_read_sample": ([S, ct.c_void_p, ct.c_void_p, ct.c_void_p], None),
            "dds_stream_write_sampleLE": ([S, ct.c_void_p, ct.c_void_p, ct.c_void_p], ct.c_bool),
            "dds_stream_write_sampleBE": ([S, ct.c_void_p, ct.c_void_p, ct.c_void_p], ct.c_bool),
        }
        for fn, (argtypes, restype) in sigs.items():
            getattr(lib, fn).argtypes = argtypes
            getattr(lib, fn).restype = restype
        self.allocator = ct.addressof(ct.c_void_p.in_dll(lib, "dds_cdrstream_default_allocator"))
        self.lib = lib
        self.topics = {}

    def topic(self, t):
        if t not in self.topics:
            from cyclonedds.topic import Topic
            try:
                self.topics[t] = Topic(self.dp, "vec_" + t.__name__, t)
            except Exception:
                # cyclonedds-python 11.0.1 cannot build the XTypes type object of a union with a
                # char discriminator (its labels are str), so no C sertype exists for such types
                self.topics[t] = None
                print(f"note: no C topic for {scoped_name(t)} (type object not buildable)", file=sys.stderr)
        return self.topics[t]

    def _sertype(self, tp):
        st = ct.c_void_p()
        if self.lib.dds_get_entity_sertype(tp._ref, ct.byref(st)) != 0:
            raise RuntimeError("dds_get_entity_sertype failed")
        return st.value

    def _serdata(self, tp, data):
        buf = ct.create_string_buffer(bytes(data), len(data))
        iov = _IOV(ct.cast(buf, ct.c_void_p), len(data))
        return self.lib.ddsi_serdata_from_ser_iov(self._sertype(tp), SDK_DATA, 1, ct.byref(iov), len(data))

    def accepts(self, t, data):
        """None if no C topic, else True/False: does the C deserializer (normalize) accept it?"""
        tp = self.topic(t)
        if tp is None:
            return None
        sd = self._serdata(tp, data)
        if not sd:
            return False
        self.lib.ddsi_serdata_unref(sd)
        return True

    def keyhash(self, t, data):
        tp = self.topic(t)
        sd = self._serdata(tp, data)
        if not sd:
            return None
        out = ct.create_string_buffer(16)
        self.lib.ddsi_serdata_get_keyhash(sd, out, False)
        self.lib.ddsi_serdata_unref(sd)
        return out.raw

    def key_sample(self, t, data):
        """Key-only serialization (native endianness, no header) as computed by C."""
        tp = self.topic(t)
        try:
            return self._calc_key(tp._ref, data)
        except Exception:
            return None

    def _desc(self, t):
        """Address of the dds_cdrstream_desc inside the binding's ddspy_sertype.

        struct ddspy_sertype { struct ddsi_sertype c; PyObject *my_py_type; bool keyless, v1_key_maxsize_bigger_16,
        v2_key_maxsize_bigger_16; unsigned char *typeinfo_ser_data; uint32_t typeinfo_ser_sz;
        unsigned char *typemap_ser_data; uint32_t typemap_ser_sz; struct dds_cdrstream_desc cdrstream_desc; }
        (clayer/pysertype.c).  my_py_type is found by scanning for id(type); checked via typeinfo_ser_sz."""
        base = self._sertype(self.topic(t))
        for off in range(0, 4096, 8):
            if ct.c_uint64.from_address(base + off).value == id(t):
                break
        else:
            raise RuntimeError("ddspy_sertype layout not recognised")
        t.__idl__.fill_type_data()
        if ct.c_uint32.from_address(base + off + 24).value != len(t.__idl__._xt_bytedata[0]):
            raise RuntimeError("ddspy_sertype layout not recognised")
        return base + off + 48

    def c_encode(self, t, xcdr2_le):
        """Decode XCDR2-LE bytes into a C sample with the C deserializer, re-encode it with the C
        serializer in all four formats.  Returns {fmt: body bytes (no header) or None on failure}."""
        if self.topic(t) is None:
            return None
        daddr = self._desc(t)
        desc = _CdrstreamDesc.from_address(daddr)
        body = bytes(xcdr2_le[4:])
        inbuf = ct.create_string_buffer(body, len(body))
        ist = _Stream()
        self.lib.dds_istream_init(ct.byref(ist), len(body), ct.cast(inbuf, ct.c_void_p), 2)
        sample = ct.create_string_buffer(desc.size + 16)   # nested allocations are leaked on purpose
        self.lib.dds_stream_read_sample(ct.byref(ist), ct.cast(sample, ct.c_void_p), self.allocator, daddr)
        out = {}
        for fmt, v2, endian in FORMATS:
            be = endian == Endianness.Big
            ost = _Stream()
            (self.lib.dds_ostreamBE_init if be else self.lib.dds_ostreamLE_init)(
                ct.byref(ost), self.allocator, 0, 2 if v2 else 1)
            ok = (self.lib.dds_stream_write_sampleBE if be else self.lib.dds_stream_write_sampleLE)(
                ct.byref(ost), self.allocator, ct.cast(sample, ct.c_void_p), daddr)
            out[fmt] = ct.string_at(ost.buf, ost.index) if ok else None
            (self.lib.dds_ostreamBE_fini if be else self.lib.dds_ostreamLE_fini)(ct.byref(ost), self.allocator)
        return out


# ---------------------------------------------------------------------------------------------
# Generation
# ---------------------------------------------------------------------------------------------

FORMATS = [("xcdr1_le", False, Endianness.Little), ("xcdr1_be", False, Endianness.Big),
           ("xcdr2_le", True, Endianness.Little), ("xcdr2_be", True, Endianness.Big)]


def roundtrip_ok(t, sample, data):
    back = t.deserialize(data)
    if to_json(back) != to_json(sample):
        return False
    # union with implicit discriminator: the library's == compares the raw (None) discriminator
    if isinstance(sample, IdlUnion) and sample.get()[0] is None:
        return True
    return back == sample


def generate(clayer):
    out = []
    seen = set()
    for name, sample in SAMPLES:
        assert name not in seen, name
        seen.add(name)
        t = type(sample)
        rec = {"type": scoped_name(t), "sample": name, "value": to_json(sample)}
        errors = {}
        accepts = {}
        for fmt, v2, endian in FORMATS:
            try:
                data = sample.serialize(use_version_2=v2, endianness=endian)
            except Exception as e:  # record, don't fail
                rec[fmt] = None
                msg = f"{type(e).__name__}: {e}"
                if e.__cause__ is not None:
                    msg += f" (caused by {type(e.__cause__).__name__}: {e.__cause__})"
                errors["xcdr2" if v2 else "xcdr1"] = msg
                continue
            if not roundtrip_ok(t, sample, data):
                raise AssertionError(f"round trip failed for {name} {fmt}: {data.hex()}")
            rec[fmt] = data.hex()
            accepts[fmt] = clayer.accepts(t, data)
        if errors:
            rec["errors"] = errors

        rec["key_hash"] = None
        rec["key_xcdr2_be"] = None
        if has_key(t):
            kh2 = clayer.keyhash(t, bytes.fromhex(rec["xcdr2_le"]))
            kh2_be = clayer.keyhash(t, bytes.fromhex(rec["xcdr2_be"]))
            assert kh2 is not None and kh2 == kh2_be, name
            kin2 = key_holder_bytes(t, sample, True)
            padded = kin2 + bytes(max(0, 16 - len(kin2)))
            if kh2 == padded[:16] and len(kin2) <= 16:
                how = "raw"
            elif kh2 == hashlib.md5(padded).digest():
                how = "md5"
            else:
                raise AssertionError(f"key hash mismatch for {name}: C {kh2.hex()} input {kin2.hex()}")
            rec["key_hash"] = kh2.hex()
            rec["key_xcdr2_be"] = kin2.hex()
            rec["key_hash_method"] = how
            # Cyclone computes the key hash of XCDR1 data from an XCDR1 (8-byte max alignment)
            # big-endian key serialization; recorded for information only.
            kh1 = clayer.keyhash(t, bytes.fromhex(rec["xcdr1_le"])) if rec["xcdr1_le"] else None
            rec["key_hash_xcdr1"] = kh1.hex() if kh1 is not None else None
            # key-only sample (as used for dispose/unregister payloads): library vs C
            ks_py = t.__idl__.serialize_key(sample, use_version_2=True, endianness=Endianness.Big)
            ks_py_le = t.__idl__.serialize_key(sample, use_version_2=True, endianness=Endianness.Little)
            ks_c = clayer.key_sample(t, bytes.fromhex(rec["xcdr2_le"]))
            rec["key_sample_xcdr2_be"] = ks_py.hex()
            rec["key_sample_c_agrees"] = (ks_c == ks_py_le) if ks_c is not None else None
        rec["c_accepts"] = accepts
        # Cross-check against the C serializer: decode our XCDR2-LE bytes in C, re-encode in C.
        cenc = clayer.c_encode(t, bytes.fromhex(rec["xcdr2_le"])) if accepts.get("xcdr2_le") else None
        if cenc is None:
            rec["c_encoder"] = None
        else:
            rec["c_encoder"] = {}
            for fmt, _, _ in FORMATS:
                ours = bytes.fromhex(rec[fmt]) if rec[fmt] else None
                if cenc[fmt] is None:
                    rec["c_encoder"][fmt] = "failed"
                elif ours is not None and cenc[fmt] == ours[4:]:
                    rec["c_encoder"][fmt] = "same"
                else:
                    hdr = ours[:4] if ours is not None else b""
                    rec["c_encoder"][fmt] = (hdr + cenc[fmt]).hex()
        out.append(rec)
    return out


def member_id_table():
    table = {}
    for t in (Mutable, MutableKinds, Hashed, DerivedM, BaseM, AlignMut, FinalOptionals, AppOptionals):
        table[scoped_name(t)] = dict(member_ids(t))
    return table


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with vectors.json, don't write")
    ap.add_argument("--stdout", action="store_true", help="print JSON instead of writing vectors.json")
    args = ap.parse_args()

    clayer = CLayer()
    vectors = generate(clayer)
    text = json.dumps(vectors, indent=1, ensure_ascii=False) + "\n"

    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "vectors.json")
    version = getattr(cyclonedds, "__version__", None)
    if version is None:
        from importlib.metadata import version as _v
        version = _v("cyclonedds")
    print(f"cyclonedds {version}: {len(vectors)} samples", file=sys.stderr)
    print("member ids: " + json.dumps(member_id_table()), file=sys.stderr)
    if args.stdout:
        sys.stdout.write(text)
    elif args.check:
        with open(path, encoding="utf-8") as f:
            if f.read() != text:
                print("vectors.json differs from freshly generated output", file=sys.stderr)
                sys.exit(1)
        print("vectors.json is up to date", file=sys.stderr)
    else:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
