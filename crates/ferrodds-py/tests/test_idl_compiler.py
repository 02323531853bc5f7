"""The IDL compiler's Python output (`ferrodds idl --lang python`): the OMG suite's
shape.idl, the ROS 2 messages and the Cyclone vector types (crates/ferrodds-idl/tests/idl/)
compile, import, round-trip through ferrodds's serialization, and read and write the
Cyclone golden vectors' bytes.

The `ferrodds` binary comes from $FERRODDS_BIN, else <repo>/target/debug/ferrodds (which
`cargo test --workspace` builds before scripts/test runs pytest); without it the tests are
skipped, or fail when $CI is set."""

import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
IDL = os.path.join(REPO, "crates", "ferrodds-idl", "tests", "idl")
ROS2 = os.path.join(IDL, "ros2")
ROS2_FILES = [os.path.join(ROS2, "sensor_msgs", "msg", f"{m}.idl")
              for m in ("Image", "PointCloud2", "JointState")]
VECTORS = os.path.join(REPO, "crates", "ferrodds-cdr", "tests", "cyclone", "vectors.json")


def binary():
    path = os.environ.get("FERRODDS_BIN") or os.path.join(REPO, "target", "debug", "ferrodds")
    if not os.path.exists(path):
        message = f"{path} is missing: `cargo build -p ferrodds-cli` builds it"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(message)
        pytest.skip(message)
    return path


def compile_idl(out, *args):
    return subprocess.run([binary(), "idl", "--lang", "python", "-o", str(out), *args],
                          capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """The generated packages, imported: (shape, vec, sensor_msgs.msg, std_msgs.msg,
    builtin_interfaces.msg, kinds)."""
    out = tmp_path_factory.mktemp("idl_py")
    done = compile_idl(out, "-I", ROS2, "-I", IDL, os.path.join(IDL, "shape.idl"),
                       os.path.join(IDL, "vec.idl"), os.path.join(IDL, "kinds.idl"), *ROS2_FILES)
    assert done.returncode == 0, done.stderr
    sys.path.insert(0, str(out))
    try:
        import builtin_interfaces.msg
        import kinds
        import sensor_msgs.msg
        import shape
        import std_msgs.msg
        import vec
    finally:
        sys.path.remove(str(out))
    return shape, vec, sensor_msgs.msg, std_msgs.msg, builtin_interfaces.msg, kinds


def unpadded(payload: bytes) -> bytes:
    """The payload without the padding its encapsulation options count (cyclonedds-python,
    which wrote the vectors, does not pad)."""
    pad = payload[3] & 3
    return payload[: len(payload) - pad] if pad else payload


def test_shape_type(generated):
    shape = generated[0]
    sample = shape.ShapeType(color="BLUE", x=1, y=2, shapesize=30, additional_payload_size=[7])
    data = sample.serialize()
    # XCDR2 little endian, appendable: DHEADER, then the members (the same bytes
    # crates/ferrodds-idl-tests/tests/shape.rs requires of the generated Rust).
    assert data.hex() == ("00090003" "1d000000" "05000000" "424c554500" "000000" "01000000"
                          "02000000" "1e000000" "01000000" "07" "000000")
    assert shape.ShapeType.deserialize(data) == sample
    assert shape.ShapeType.__idl_typename__ == "ShapeType"


def test_ros2_messages_round_trip(generated):
    _, _, sensor_msgs, std_msgs, builtin_interfaces, _ = generated
    header = std_msgs.Header(stamp=builtin_interfaces.Time(sec=-5, nanosec=999_999_999),
                             frame_id="base_link")
    samples = [
        header,
        sensor_msgs.Image(header=header, height=2, width=3, encoding="rgb8", is_bigendian=0,
                          step=9, data=list(range(18))),
        sensor_msgs.PointCloud2(
            header=header, height=1, width=2,
            fields=[sensor_msgs.PointField(name=n, offset=4 * i,
                                           datatype=sensor_msgs.PointField_Constants.FLOAT32,
                                           count=1) for i, n in enumerate("xyz")],
            is_bigendian=False, point_step=12, row_step=24, data=[0] * 24, is_dense=True),
        sensor_msgs.JointState(header=header, name=["a", "b"], position=[0.5, -1.0],
                               velocity=[], effort=[2.0, 3.0]),
    ]
    for sample in samples:
        for version_2 in (False, True):
            data = sample.serialize(use_version_2=version_2)
            assert type(sample).deserialize(data) == sample, (type(sample), version_2)
    assert sensor_msgs.PointField_Constants.FLOAT64 == 8
    assert sensor_msgs.Image.__idl_typename__ == "sensor_msgs::msg::Image"
    # Header: final, so XCDR1: sec, nanosec, then the string.
    assert header.serialize().hex() == ("00010002" "fbffffff" "ffc99a3b" "0a000000"
                                        "626173655f6c696e6b00" "0000")


def test_every_kind_round_trips(generated):
    shape, kinds = generated[0], generated[5]
    inner = kinds.inner
    node = kinds.Node(id=1, values=[1, -1])
    sample = kinds.Kinds(
        id=3, values=[4], ll=-1, ull=2**64 - 1, us=65535, s=-2, i8=-8, u8=8, c="c", flag=True,
        module=1, type_=2, self_=3, from_=4, class_=5, position=[1, 2, 3],
        path=[[1, 2, 3], [4, 5, 6]], names=["a", "bb"], name_lists=[["x"], []],
        bounded="b" * 20, nodes=[[node], []], grid=[[node] * 3] * 2, maybe_vector=None,
        maybe_choice=kinds.Choice(on=5),
        choice=kinds.Choice(discriminator=inner.Mode.OFF, value="other"),
        by_octet=kinds.ByOctet(many=[1, 2]), signed_=kinds.Signed(negative=True),
        everything=kinds.Everything(node=node),
        permissions=kinds.Permissions(READ=True, ADMIN=True), wide=kinds.Wide(HIGH=True),
        mode=inner.Mode.STANDBY,
        shape=shape.ShapeType(color="RED", x=1, y=2, shapesize=3, additional_payload_size=[]))
    for version_2 in (False, True):
        assert kinds.Kinds.deserialize(sample.serialize(use_version_2=version_2)) == sample
    # Members renamed around Python keywords have their IDL names in the runtime type.
    view = json.loads(sample.to_json())
    assert (view["module"], view["type"], view["self"], view["from"], view["class"]) == (
        1, 2, 3, 4, 5)
    assert kinds.Empty.deserialize(kinds.Empty().serialize()) == kinds.Empty()
    assert kinds.Permissions(WRITE=True).as_mask() == 1 << 4
    assert kinds.Wide(HIGH=True).as_mask() == 1 << 39
    assert (kinds.MASK, kinds.GREETING, inner.DEFAULT_MODE) == (269, "hello, world\n",
                                                                inner.Mode.OFF)


def test_hashed_member_ids(generated):
    """The ids of @autoid(HASH), @hashid and @id members, read from the member headers: the
    same numbers crates/ferrodds-idl-tests/tests/kinds.rs requires of the generated Rust."""
    kinds = generated[5]
    data = kinds.Hashing(id=1, renamed="r", hashed=2, pinned=3, after_pinned=4,
                         blob=[1, 2]).serialize(endianness="little")
    at, ids = 8, []
    while at < len(data) - (data[3] & 3):
        header = int.from_bytes(data[at:at + 4], "little")
        ids.append(header & 0x0FFFFFFF)
        length_code = header >> 28 & 7
        if length_code < 4:
            size = 4 + (1 << length_code)
        else:
            # NEXTINT: a byte length (4, 5), or a count of 4- or 8-byte elements (6, 7).
            nextint = int.from_bytes(data[at + 4:at + 8], "little")
            size = 8 + nextint * {4: 1, 5: 1, 6: 4, 7: 8}[length_code]
        at += (size + 3) & ~3
    assert ids == [79104952, 75434407, 24944607, 100, 216166289, 193996526]


def test_ros2_wire_names(tmp_path):
    done = compile_idl(tmp_path, "--ros2-names", "-I", ROS2,
                       os.path.join(ROS2, "std_msgs", "msg", "Header.idl"))
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "std_msgs" / "msg" / "_Header.py").read_text()
    assert 'typename="std_msgs::msg::dds_::Header_"' in text
    init = (tmp_path / "builtin_interfaces" / "msg" / "__init__.py").read_text()
    assert "from ._Time import Time" in init


def vectors():
    with open(VECTORS) as f:
        return json.load(f)


def formats(v):
    """(format, version_2, the bytes to expect): C's where Cyclone's writers differ."""
    for name, version_2 in (("xcdr1_le", False), ("xcdr1_be", False), ("xcdr2_le", True),
                            ("xcdr2_be", True)):
        c = (v.get("c_encoder") or {}).get(name)
        expected = c if c not in (None, "same", "failed") else v[name]
        yield name, version_2, bytes.fromhex(expected)


@pytest.mark.parametrize("type_name", sorted({v["type"].split("::")[1] for v in vectors()}))
def test_vector_types_read_and_write_cyclones_bytes(generated, type_name):
    vec = generated[1]
    cls = getattr(vec, type_name)
    assert cls.__idl_typename__ == f"vec::{type_name}"
    checked = 0
    for v in (v for v in vectors() if v["type"] == f"vec::{type_name}"):
        value = cls.from_json(json.dumps(v["value"]))
        for name, version_2, expected in formats(v):
            back = cls.deserialize(expected)
            assert json.loads(back.to_json()) == v["value"], (v["sample"], name)
            endianness = "big" if name.endswith("be") else "little"
            got = value.serialize(endianness=endianness, use_version_2=version_2)
            # The representation identifier, then the body (the options count padding).
            assert (got[:2], unpadded(got)[4:]) == (expected[:2], unpadded(expected)[4:]), (
                v["sample"], name, got.hex())
            checked += 1
    assert checked


def test_errors_name_file_line_and_column(tmp_path):
    bad = tmp_path / "bad.idl"
    bad.write_text("module m {\n  struct S { long x }; };\n")
    done = compile_idl(tmp_path / "out", str(bad))
    assert done.returncode != 0
    assert done.stderr.strip().count("\n") == 0, done.stderr
    assert f"{bad}:2:21: expected `;`, found `}}`" in done.stderr
