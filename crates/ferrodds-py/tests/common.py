"""Types declared once, for either package: ``make_types(ferrodds)`` or
``make_types(cyclonedds)`` builds the same IDL types with that package's classes (the API
is the same, which is the point)."""

import importlib
from dataclasses import dataclass, field
from typing import Optional


def make_types(package: str):
    idl = importlib.import_module(f"{package}.idl")
    t = importlib.import_module(f"{package}.idl.types")
    a = importlib.import_module(f"{package}.idl.annotations")

    class Color(idl.IdlEnum, typename="interop::Color"):
        RED = 0
        GREEN = 1
        BLUE = 2

    @dataclass
    class Point(idl.IdlStruct, typename="interop::Point"):
        x: t.int32
        y: t.int32

    class Shape(idl.IdlUnion, discriminator=t.int32, typename="interop::Shape"):
        circle: t.case[1, t.float64]
        square: t.case[[2, 3], Point]
        label: t.default[t.bounded_str[16]]

    @dataclass
    @a.appendable
    class Everything(idl.IdlStruct, typename="interop::Everything"):
        id: t.int32
        a.key("id")
        name: t.bounded_str[32]
        color: Color
        shape: Shape
        points: t.sequence[Point]
        readings: t.array[t.float32, 3]
        matrix: t.array[t.array[t.int16, 2], 2]
        tags: t.sequence[str, 4]
        flag: bool
        small: t.int8
        big: t.uint64
        ch: t.char
        data: t.sequence[t.uint8]
        note: Optional[str] = None
        count: Optional[t.uint32] = None

    @dataclass
    @a.mutable
    class Mutable(idl.IdlStruct, typename="interop::Mutable"):
        key_a: t.uint16
        a.key("key_a")
        text: str
        values: t.sequence[t.int64]
        center: Point
        opt: Optional[t.float64] = None

    @dataclass
    class Plain(idl.IdlStruct, typename="interop::Plain"):
        id: t.int32
        a.key("id")
        value: t.float64
        name: str

    def everything(i: int):
        return Everything(
            id=i, name=f"item-{i}", color=Color.BLUE if i % 2 else Color.GREEN,
            shape=Shape(square=Point(i, -i)) if i % 3 == 0 else
            (Shape(circle=1.5 * i) if i % 3 == 1 else Shape(label="lbl")),
            points=[Point(k, k * k) for k in range(i % 4)],
            readings=[0.5, 1.25, -2.0], matrix=[[1, -2], [3, 4]], tags=["a", "bc"][: i % 3],
            flag=i % 2 == 0, small=-5, big=2**63 + i, ch="z", data=[1, 2, 3, 255],
            note=None if i % 2 else f"note {i}", count=i if i % 3 else None)

    def mutable(i: int):
        return Mutable(key_a=i, text="m" * i, values=[i, -i, 2**40], center=Point(1, 2),
                       opt=None if i % 2 else 0.25)

    return {"Color": Color, "Point": Point, "Shape": Shape, "Everything": Everything,
            "Mutable": Mutable, "Plain": Plain, "everything": everything, "mutable": mutable}
