"""Publishes vehicles, written against cyclonedds-python's documented API.

    python vehicles_pub.py DOMAIN TOPIC COUNT

Waits for a subscriber, writes COUNT vehicles (keyed by id), disposes vehicle 0, waits for
the acknowledgments and exits.
"""

import sys
import time
from dataclasses import dataclass, field
from typing import Optional

from cyclonedds.core import Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlEnum, IdlStruct, IdlUnion
from cyclonedds.idl.annotations import appendable, key
from cyclonedds.idl.types import array, case, default, float64, int32, sequence, uint16
from cyclonedds.pub import DataWriter, Publisher
from cyclonedds.topic import Topic
from cyclonedds.util import duration


class Kind(IdlEnum, typename="fleet::Kind"):
    CAR = 0
    TRUCK = 1
    DRONE = 2


@dataclass
class Position(IdlStruct, typename="fleet::Position"):
    x: float64
    y: float64


class Payload(IdlUnion, discriminator=int32, typename="fleet::Payload"):
    mass: case[1, float64]
    crates: case[2, sequence[uint16]]
    note: default[str]


@dataclass
@appendable
class Vehicle(IdlStruct, typename="fleet::Vehicle"):
    id: int32
    key("id")
    name: str
    kind: Kind
    position: Position
    route: sequence[Position]
    fuel: array[float64, 2]
    payload: Payload
    driver: Optional[str] = None


def vehicle(i: int) -> Vehicle:
    payload = [Payload(mass=1.5 * i), Payload(crates=[i, i + 1]), Payload(note=f"v{i}")][i % 3]
    return Vehicle(id=i, name=f"vehicle-{i}", kind=Kind(i % 3), position=Position(i, -i),
                   route=[Position(k, k / 2) for k in range(i % 3)], fuel=[0.5, 1.0 * i],
                   payload=payload, driver=None if i % 2 else f"driver-{i}")


def main() -> int:
    domain, topic_name, count = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    qos = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.History.KeepAll,
              Policy.Durability.TransientLocal)
    dp = DomainParticipant(domain)
    topic = Topic(dp, topic_name, Vehicle)
    publisher = Publisher(dp, qos=Qos(Policy.Partition(["fleet"])))
    writer = DataWriter(publisher, topic, qos=qos)
    deadline = time.monotonic() + 15
    while not writer.get_matched_subscriptions():
        if time.monotonic() > deadline:
            print("no subscriber", file=sys.stderr)
            return 1
        time.sleep(0.05)
    for i in range(count):
        writer.write(vehicle(i))
    writer.dispose(vehicle(0))
    writer.wait_for_acks(duration(seconds=5))
    time.sleep(0.5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
