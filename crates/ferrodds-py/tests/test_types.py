"""Serialization in Rust, byte for byte as cyclonedds-python's own (pure Python) does it."""

import pytest

from common import make_types

F = make_types("ferrodds")
C = make_types("cyclonedds")


def samples(ns):
    yield from (ns["everything"](i) for i in range(6))
    yield from (ns["mutable"](i) for i in range(4))
    yield ns["Plain"](7, 2.5, "plain")


def unpadded(payload: bytes) -> bytes:
    """The payload without the padding its encapsulation options count: FerroDDS pads the
    payload to a multiple of 4 as Cyclone DDS (C) does, cyclonedds-python does not."""
    pad = payload[3] & 3
    return payload[: len(payload) - pad] if pad else payload


@pytest.mark.parametrize("index", range(11))
@pytest.mark.parametrize("version_2", [None, False, True])
def test_bytes_equal_cyclonedds(index, version_2):
    f = list(samples(F))[index]
    c = list(samples(C))[index]
    fb = f.serialize(use_version_2=version_2)
    cb = c.serialize(use_version_2=version_2)
    if type(f).__name__ != "Mutable":
        # A mutable type's key member carries the must-understand flag in FerroDDS's member
        # headers (XTypes 7.4.3.5.3, and Cyclone DDS's C code), not in cyclonedds-python's:
        # for it, each package reading the other's bytes is the check.
        assert unpadded(fb)[:2] + b"\0\0" + unpadded(fb)[4:] == cb, (
            f"{type(f).__name__} {version_2}: ferrodds {fb.hex()} cyclonedds {cb.hex()}")
    # Each package reads what the other wrote.
    assert type(f).deserialize(cb) == f
    # (cyclonedds-python's own union set to its default branch compares unequal to the
    # same union read back, so its reading of our bytes is compared with its reading of
    # its own.)
    assert type(c).deserialize(fb) == type(c).deserialize(cb)


def test_round_trip_json():
    s = F["everything"](3)
    assert type(s).from_json(s.to_json()) == s


def test_errors_say_where():
    s = F["everything"](1)
    s.points = [F["Point"](1, "two")]
    with pytest.raises(ValueError, match=r"points\[0\]\.y: expected an int"):
        s.serialize()
    s = F["everything"](1)
    s.readings = [1.0]
    with pytest.raises(ValueError, match="readings: an array of 3 elements cannot hold 1"):
        s.serialize()


def test_garbage_is_an_error_not_a_crash():
    E = F["Everything"]
    good = F["everything"](4).serialize()
    for cut in range(0, len(good), 3):
        try:
            E.deserialize(good[:cut])
        except ValueError:
            pass
