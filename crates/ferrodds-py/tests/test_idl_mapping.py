"""Where a class's mapping to IDL has choices, ferrodds.idl makes the ones cyclonedds-python
11.0.1 and Cyclone DDS's C library make: a union over `char` keeps its discriminator a
character, a member renamed around a Python keyword keeps its IDL name on the wire, a union
set by its default branch takes a discriminator no label uses (an enumerator, for an enum),
and the key members of a mutable type carry no must-understand flag."""

import hashlib
import importlib
import json
import struct
from dataclasses import dataclass

import pytest


def make(package: str):
    idl = importlib.import_module(f"{package}.idl")
    t = importlib.import_module(f"{package}.idl.types")
    a = importlib.import_module(f"{package}.idl.annotations")

    class ByChar(idl.IdlUnion, discriminator=t.char, typename="mapping::ByChar"):
        a: t.case["a", t.int64]
        b: t.case[["b", "c"], t.uint8]

    class ByCharDefault(idl.IdlUnion, discriminator=t.char, typename="mapping::ByCharDefault"):
        a: t.case["a", t.int16]
        other: t.default[t.int32]

    class ByCharZero(idl.IdlUnion, discriminator=t.char, typename="mapping::ByCharZero"):
        zero: t.case["\0", t.int8]
        other: t.default[t.int32]

    @dataclass
    class HoldsChars(idl.IdlStruct, typename="mapping::HoldsChars"):
        plain: ByChar
        with_default: ByCharDefault

    class Color(idl.IdlEnum, typename="mapping::Color"):
        RED = 0
        GREEN = 1
        BLUE = 2

    class ByColor(idl.IdlUnion, discriminator=Color, typename="mapping::ByColor"):
        red: t.case[Color.RED, t.int16]
        blue: t.case[Color.BLUE, str]
        other: t.default[t.int32]

    class ByFlag(idl.IdlUnion, discriminator=bool, typename="mapping::ByFlag"):
        on: t.case[True, t.int32]
        other: t.default[t.int32]

    @dataclass
    @a.mutable
    @a.autoid("hash")
    class Renamed(idl.IdlStruct, typename="mapping::Renamed"):
        type_: t.int32
        a.member_name("type_", "type")
        a.key("type_")
        from_: str
        a.member_name("from_", "from")

    class RenamedBranches(idl.IdlUnion, discriminator=t.int16, typename="mapping::RenamedBranches"):
        class_: t.case[1, t.int32]
        a.member_name("class_", "class")
        pass_: t.default[str]
        a.member_name("pass_", "pass")

    @dataclass
    @a.mutable
    class Keyed(idl.IdlStruct, typename="mapping::Keyed"):
        id: t.int32
        a.key("id")
        name: str
        a.key("name")
        value: t.int16
        a.must_understand("value")
        note: str

    return {k: v for k, v in locals().items() if isinstance(v, type)}


F = make("ferrodds")
C = make("cyclonedds")


def as_cyclonedds_python(payload: bytes) -> bytes:
    """The payload without the padding its encapsulation options count, and options 0:
    FerroDDS pads to a multiple of 4 as Cyclone DDS (C) does, cyclonedds-python does not."""
    pad = payload[3] & 3
    return payload[:2] + b"\0\0" + payload[4:len(payload) - pad]


def test_char_discriminators_read_back_as_characters():
    for name, make_sample in [
        ("ByChar", lambda u: u(a=-1)),
        ("ByChar", lambda u: u(discriminator="c", value=200)),
        ("ByChar", lambda u: u(discriminator="z", value=None)),
        ("ByCharDefault", lambda u: u(a=7)),
        ("ByCharDefault", lambda u: u(discriminator="q", value=9)),
    ]:
        f, c = make_sample(F[name]), make_sample(C[name])
        data = f.serialize()
        assert as_cyclonedds_python(data) == c.serialize(), (name, data.hex())
        back = F[name].deserialize(data)
        assert back == f
        assert back.discriminator == C[name].deserialize(data).discriminator == f.discriminator
        assert isinstance(back.discriminator, str)
    # Inside a struct, and through the JSON view.
    holds = F["HoldsChars"](F["ByChar"](b=3), F["ByCharDefault"](other=4))
    assert F["HoldsChars"].deserialize(holds.serialize()) == holds
    assert F["HoldsChars"].from_json(holds.to_json()) == holds


def test_char_default_branch_takes_the_first_free_character():
    f, c = F["ByCharDefault"](other=-3), C["ByCharDefault"](other=-3)
    assert f.discriminator == "\0"
    assert as_cyclonedds_python(f.serialize()) == c.serialize()
    assert F["ByCharDefault"].deserialize(f.serialize()) == f
    # '\0' is a label here, so the default branch takes '\x01'. (cyclonedds-python 11.0.1
    # takes '\0' all the same, comparing character codes with the labels' str, and so
    # writes a discriminator that selects the other branch.)
    f = F["ByCharZero"](other=-3)
    assert f.discriminator == "\x01"
    assert f.serialize()[4:] == b"\x01\0\0\0" + struct.pack("<i", -3)
    assert F["ByCharZero"].deserialize(f.serialize()) == f


def test_renamed_members_keep_their_idl_names():
    r = F["Renamed"](type_=5, from_="x")
    assert json.loads(r.to_json()) == {"type": 5, "from": "x"}
    assert F["Renamed"].from_json('{"type": 6, "from": "y"}') == F["Renamed"](6, "y")
    # @autoid(HASH): the ids are the hashes of the IDL names, read from the member headers.
    ids = [h & 0x0FFFFFFF for h in member_headers(r.serialize(endianness="little"))]
    assert ids == [struct.unpack("<I", hashlib.md5(n.encode()).digest()[:4])[0] & 0x0FFFFFFF
                   for n in ("type", "from")]
    u = F["RenamedBranches"](class_=3)
    assert json.loads(u.to_json()) == {"discriminator": 1, "class": 3}
    assert F["RenamedBranches"].from_json('{"discriminator": -1, "pass": "p"}') == \
        F["RenamedBranches"](pass_="p")
    # The bytes do not depend on names (sequential ids): cyclonedds-python's, exactly.
    assert as_cyclonedds_python(u.serialize()) == C["RenamedBranches"](class_=3).serialize()


def test_errors_name_the_python_attribute():
    r = F["Renamed"](type_="five", from_="x")
    with pytest.raises(ValueError, match=r"^type_: expected an int"):
        r.serialize()


def test_enum_default_branch_takes_an_enumerator_no_label_uses():
    """cyclonedds-python 11.0.1 writes 3 here (the first value that is no enumerator), which
    Cyclone DDS's C deserializer rejects (an enum discriminator above the largest
    enumerator); the default discriminator is the first enumerator no label uses."""
    Color = F["Color"]
    u = F["ByColor"](other=7)
    assert u.discriminator is Color.GREEN
    data = u.serialize()
    assert data[4:] == struct.pack("<ii", 1, 7)
    assert F["ByColor"].deserialize(data) == u
    c = C["ByColor"].deserialize(data)
    assert (c.discriminator, c.value) == (C["Color"].GREEN, 7)


def test_a_default_branch_without_a_free_discriminator_is_an_error():
    import ferrodds.idl as idl
    import ferrodds.idl.types as t

    class Full(idl.IdlUnion, discriminator=F["Color"], typename="mapping::Full"):
        red: t.case[[F["Color"].RED, F["Color"].GREEN], t.int16]
        blue: t.case[F["Color"].BLUE, str]
        other: t.default[t.int32]

    with pytest.raises(TypeError, match="Full: every Color enumerator is a case label"):
        Full(other=1)

    class Both(idl.IdlUnion, discriminator=bool, typename="mapping::Both"):
        on: t.case[True, t.int32]
        off: t.case[False, t.int32]
        other: t.default[t.int32]

    with pytest.raises(TypeError, match="Both: every bool value is a case label"):
        Both(other=1)
    # One value left: the default branch takes it.
    assert F["ByFlag"](other=2).discriminator is False
    assert as_cyclonedds_python(F["ByFlag"](other=2).serialize()) == \
        C["ByFlag"](other=2).serialize()


def test_mutable_keys_carry_no_must_understand_flag():
    """Cyclone DDS (C and Python) sets the M flag of an EMHEADER only for @must_understand
    members, never for keys (crates/ferrodds-cdr/tests/cyclone/README.md); so do
    ferrodds-cdr's derived types, and so must ferrodds.idl."""
    f = F["Keyed"](1, "k", 2, "n")
    c = C["Keyed"](1, "k", 2, "n")
    from cyclonedds.idl._support import Endianness

    for version_2 in (False, True):
        for endianness in ("little", "big"):
            fb = f.serialize(use_version_2=version_2, endianness=endianness)
            cb = c.serialize(use_version_2=version_2, endianness=Endianness[endianness.title()])
            assert as_cyclonedds_python(fb) == cb, (version_2, endianness)
    # XCDR2 little endian: the M flag of each EMHEADER (id, name, value, note).
    assert [h >> 31 for h in member_headers(f.serialize(use_version_2=True))] == [0, 0, 1, 0]


def member_headers(data: bytes):
    """The EMHEADERs of an XCDR2 little-endian mutable struct (after header and DHEADER)."""
    at, headers = 8, []
    end = len(data) - (data[3] & 3)
    while at < end:
        header = int.from_bytes(data[at:at + 4], "little")
        headers.append(header)
        length_code = header >> 28 & 7
        if length_code < 4:
            size = 4 + (1 << length_code)
        else:
            # NEXTINT: a byte length (4, 5), or a count of 4- or 8-byte elements (6, 7).
            nextint = int.from_bytes(data[at + 4:at + 8], "little")
            size = 8 + nextint * {4: 1, 5: 1, 6: 4, 7: 8}[length_code]
        at += (size + 3) & ~3
    return headers


def test_labels_equal_in_value_but_not_in_type_stay_apart():
    """typing caches ``Annotated`` by equality, and True == 1: a ``case[1, T]`` declared after
    a ``case[True, T]`` must keep its own label (RenamedBranches above comes after ByFlag)."""
    import ferrodds.idl.types as t

    assert t.case[True, t.int32] is not t.case[1, t.int32]
    assert F["RenamedBranches"](class_=3).discriminator == 1
    assert type(F["RenamedBranches"](class_=3).discriminator) is int
