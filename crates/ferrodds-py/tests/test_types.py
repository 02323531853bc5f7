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


def test_json_text_beyond_ascii():
    # The text is read where Python keeps its UTF-8 form (src/text.rs): text outside ASCII
    # comes through whole, and a str no UTF-8 can hold is Python's own error.
    P = F["Plain"]
    s = P(7, 2.5, "grüße, 世界 🚗")
    text = s.to_json()
    assert P.from_json(text) == s
    assert P.from_json(text.replace("\\u00fc", "ü")) == s
    with pytest.raises(UnicodeEncodeError):
        P.from_json(text[:-1] + "\ud800}")
    with pytest.raises(TypeError):
        P.from_json(text.encode())


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


def test_number_buffers_cross_without_lists():
    """numpy arrays, array.array and memoryview for sequences and arrays of numbers give
    the bytes a list of the same numbers gives (read from the buffer in one piece)."""
    import array
    from dataclasses import dataclass

    import numpy as np

    import ferrodds.idl as idl
    import ferrodds.idl.types as t

    @dataclass
    class Readings(idl.IdlStruct, typename="test::Readings"):
        values: t.sequence[t.float64]
        ids: t.array[t.int32, 3]
        small: t.sequence[t.uint16]
        grid: t.array[t.array[t.float32, 2], 2]

    as_lists = Readings([0.5, -1.25, 3.0], [1, -2, 3], [7, 65535], [[1.5, 2.5], [3.5, 4.5]])
    expected = as_lists.serialize()
    buffers = [
        Readings(np.array([0.5, -1.25, 3.0]), np.array([1, -2, 3], dtype=np.int32),
                 np.array([7, 65535], dtype=np.uint16),
                 np.array([[1.5, 2.5], [3.5, 4.5]], dtype=np.float32)),
        Readings(array.array("d", [0.5, -1.25, 3.0]), array.array("i", [1, -2, 3]),
                 array.array("H", [7, 65535]),
                 [array.array("f", [1.5, 2.5]), array.array("f", [3.5, 4.5])]),
        Readings(memoryview(array.array("d", [0.5, -1.25, 3.0])),
                 memoryview(array.array("i", [1, -2, 3])), [7, 65535],
                 [[1.5, 2.5], [3.5, 4.5]]),
    ]
    for b in buffers:
        assert b.serialize() == expected
    # A buffer of another item type takes the general path, which checks each element.
    wrong = Readings(np.array([1, 2, 3], dtype=np.int64), [1, -2, 3], [7], [[0, 0], [0, 0]])
    assert Readings.deserialize(wrong.serialize()).values == [1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match=r"ids: an array of 3 elements cannot hold 2"):
        Readings([], np.array([1, 2], dtype=np.int32), [], [[0, 0], [0, 0]]).serialize()
