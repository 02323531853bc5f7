#!/usr/bin/env python3
"""A Cyclone DDS publisher of a type FerroDDS was never compiled with.

Publishes `xtypes::Telemetry` (mutable, keyed, with an enum, a union, nested appendable
structs, a sequence of structs, an array, an optional and an octet sequence) on a topic, so
that a FerroDDS test can obtain the type over XTypes TypeLookup alone and read the samples.
Built on PyPI's ``cyclonedds`` (11.0.1).

Usage: cyclone_xtypes_pub.py --domain D --topic T [--count N] [--period S]

Writes samples 0..N-1 (again and again until killed, or --seconds elapse) and prints each
sample once, as one JSON line, in FerroDDS's JSON view of dynamic values: enums by name,
unions as {"discriminator": d, "<branch>": value}, octet sequences as arrays of numbers,
absent optionals as null. Exit codes: 0 done, 4 bad usage or DDS error.
"""

import base64
import json
import sys
import time

from cyclone_env import Parser, pin_to_loopback


p = Parser(description=__doc__.splitlines()[0])
p.add_argument("--domain", type=int, required=True)
p.add_argument("--topic", required=True)
p.add_argument("--count", type=int, default=5, help="distinct samples (default 5)")
p.add_argument("--period", type=float, default=0.2, help="seconds between writes (default 0.2)")
p.add_argument("--seconds", type=float, default=60.0, help="stop after this long (default 60)")
ARGS = p.parse_args()
if ARGS.count < 1:
    p.error("--count must be >= 1")

pin_to_loopback()

from dataclasses import dataclass  # noqa: E402
from typing import Optional  # noqa: E402

from cyclonedds.domain import DomainParticipant  # noqa: E402
from cyclonedds.idl import IdlEnum, IdlStruct, IdlUnion  # noqa: E402
from cyclonedds.idl.annotations import appendable, key, mutable  # noqa: E402
from cyclonedds.idl.types import array, case, float32, float64, int32, sequence, uint8  # noqa: E402
from cyclonedds.pub import DataWriter  # noqa: E402
from cyclonedds.topic import Topic  # noqa: E402


class Mode(IdlEnum, typename="xtypes::Mode"):
    IDLE = 0
    RUN = 1
    FAULT = 2


@dataclass
@appendable
class Vec3(IdlStruct, typename="xtypes::Vec3"):
    x: float64
    y: float64
    z: float64


class Reading(IdlUnion, discriminator=int32, typename="xtypes::Reading"):
    temperature: case[1, float64]
    label: case[2, str]


@dataclass
@mutable
class Telemetry(IdlStruct, typename="xtypes::Telemetry"):
    id: int32
    key("id")
    name: str
    mode: Mode
    position: Vec3
    path: sequence[Vec3]
    gains: array[float32, 3]
    reading: Reading
    note: Optional[str]
    raw: sequence[uint8]


def sample(i):
    reading = Reading(temperature=20.5 + i) if i % 2 == 0 else Reading(label=f"label-{i}")
    return Telemetry(
        id=i,
        name=f"robot-{i}",
        mode=Mode(i % 3),
        position=Vec3(float(i), 2.0 * i, -1.5),
        path=[Vec3(float(k), float(i), 0.25) for k in range(i % 3)],
        gains=[0.5, 1.0 + i, 2.0],
        reading=reading,
        note=None if i % 2 else f"note {i}",
        raw=[i, 255, 0][: 1 + i % 3],
    )


def as_json(s):
    v3 = lambda v: {"x": v.x, "y": v.y, "z": v.z}  # noqa: E731
    if s.reading.discriminator == 1:
        reading = {"discriminator": 1, "temperature": s.reading.value}
    else:
        reading = {"discriminator": 2, "label": s.reading.value}
    return {
        "id": s.id,
        "name": s.name,
        "mode": s.mode.name,
        "position": v3(s.position),
        "path": [v3(v) for v in s.path],
        "gains": list(s.gains),
        "reading": reading,
        "note": s.note,
        "raw": base64.b64encode(bytes(s.raw)).decode("ascii"),  # the JSON view of octets
    }


try:
    dp = DomainParticipant(ARGS.domain)
    writer = DataWriter(dp, Topic(dp, ARGS.topic, Telemetry))
except Exception as e:  # noqa: BLE001
    sys.stderr.write(f"cyclone_xtypes_pub: cannot create the writer: {e}\n")
    sys.exit(4)

samples = [sample(i) for i in range(ARGS.count)]
for s in samples:
    print(json.dumps(as_json(s), sort_keys=True), flush=True)
end = time.monotonic() + ARGS.seconds
while time.monotonic() < end:
    for s in samples:
        writer.write(s)
    time.sleep(ARGS.period)
