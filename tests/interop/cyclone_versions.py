#!/usr/bin/env python3
"""Cyclone DDS endpoints of versions of one type, for FerroDDS's assignability tests.

Built on PyPI's ``cyclonedds`` (11.0.1). The type is `versions::Shape`, appendable:

  --version 1    { @key string color; long x; }
  --version 2    { @key string color; long x; long y; }      (a member appended)
  --version bad  { @key string color; double x; }            (not assignable to 1 or 2)

Usage:
  cyclone_versions.py pub --domain D --topic T --version V [--count N] [--seconds S]
      writes samples i = 0..N-1 (color "C<i>", x = i, y = 10 i) again and again until S
      seconds passed, printing each once as a JSON line.
  cyclone_versions.py sub --domain D --topic T --version V [--count N] [--timeout S]
      prints each valid sample received as a JSON line; exits 0 after N distinct ones,
      1 if they did not come within S seconds.

Exit codes: 0 success, 1 timed out, 4 bad usage or DDS error.
"""

import json
import sys
import time

from cyclone_env import Parser, pin_to_loopback


p = Parser(description=__doc__.splitlines()[0])
p.add_argument("mode", choices=["pub", "sub"])
p.add_argument("--domain", type=int, required=True)
p.add_argument("--topic", required=True)
p.add_argument("--version", choices=["1", "2", "bad"], required=True)
p.add_argument("--count", type=int, default=3)
p.add_argument("--seconds", type=float, default=60.0, help="pub: how long to write (default 60)")
p.add_argument("--timeout", type=float, default=30.0, help="sub: how long to wait (default 30)")
ARGS = p.parse_args()
if ARGS.count < 1:
    p.error("--count must be >= 1")

pin_to_loopback()

from dataclasses import asdict, dataclass  # noqa: E402

from cyclonedds.domain import DomainParticipant  # noqa: E402
from cyclonedds.idl import IdlStruct  # noqa: E402
from cyclonedds.idl.annotations import appendable, key  # noqa: E402
from cyclonedds.idl.types import float64, int32  # noqa: E402
from cyclonedds.pub import DataWriter  # noqa: E402
from cyclonedds.sub import DataReader  # noqa: E402
from cyclonedds.topic import Topic  # noqa: E402
from cyclonedds.util import duration  # noqa: E402


@dataclass
@appendable
class ShapeV1(IdlStruct, typename="versions::Shape"):
    color: str
    key("color")
    x: int32


@dataclass
@appendable
class ShapeV2(IdlStruct, typename="versions::Shape"):
    color: str
    key("color")
    x: int32
    y: int32


@dataclass
@appendable
class ShapeBad(IdlStruct, typename="versions::Shape"):
    color: str
    key("color")
    x: float64


TYPES = {"1": ShapeV1, "2": ShapeV2, "bad": ShapeBad}
T = TYPES[ARGS.version]


def sample(i):
    fields = {"color": f"C{i}", "x": i}
    if ARGS.version == "2":
        fields["y"] = 10 * i
    if ARGS.version == "bad":
        fields["x"] = float(i)
    return T(**fields)


try:
    dp = DomainParticipant(ARGS.domain)
    topic = Topic(dp, ARGS.topic, T)
    if ARGS.mode == "pub":
        writer = DataWriter(dp, topic)
    else:
        reader = DataReader(dp, topic)
except Exception as e:  # noqa: BLE001
    sys.stderr.write(f"cyclone_versions: cannot create the endpoint: {e}\n")
    sys.exit(4)

if ARGS.mode == "pub":
    samples = [sample(i) for i in range(ARGS.count)]
    for s in samples:
        print(json.dumps(asdict(s), sort_keys=True), flush=True)
    end = time.monotonic() + ARGS.seconds
    while time.monotonic() < end:
        for s in samples:
            writer.write(s)
        time.sleep(0.1)
    sys.exit(0)

seen = set()
end = time.monotonic() + ARGS.timeout
while time.monotonic() < end and len(seen) < ARGS.count:
    for s in reader.take(N=100):
        if not s.sample_info.valid_data:
            continue
        line = json.dumps(asdict(s), sort_keys=True)
        if line not in seen:
            seen.add(line)
            print(line, flush=True)
    time.sleep(0.02)
if len(seen) < ARGS.count:
    sys.stderr.write(f"cyclone_versions: {len(seen)} of {ARGS.count} samples within {ARGS.timeout} s\n")
    sys.exit(1)
sys.exit(0)
