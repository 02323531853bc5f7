"""Subscribes to vehicles, written against cyclonedds-python's documented API.

    python vehicles_sub.py DOMAIN TOPIC COUNT

Uses a listener (data available), a waitset with a read condition, read and take; prints
one line per vehicle received, then the instance state of vehicle 0 once its dispose came.
"""

import sys
import threading
import time

from cyclonedds.core import (InstanceState, Listener, Policy, Qos, ReadCondition,
                             SampleState, ViewState, WaitSet)
from cyclonedds.domain import DomainParticipant
from cyclonedds.sub import DataReader, Subscriber
from cyclonedds.topic import Topic
from cyclonedds.util import duration

from vehicles_pub import Vehicle


class Counter(Listener):
    def __init__(self):
        super().__init__()
        self.calls = 0
        self.event = threading.Event()

    def on_data_available(self, reader):
        self.calls += 1
        self.event.set()


def line(v) -> str:
    p = v.payload
    return (f"{v.id} {v.name} {v.kind.name} ({v.position.x}, {v.position.y}) "
            f"route={[(r.x, r.y) for r in v.route]} fuel={list(v.fuel)} "
            f"payload={p.discriminator}:{p.value!r} driver={v.driver}")


def main() -> int:
    domain, topic_name, count = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    qos = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.History.KeepAll,
              Policy.Durability.TransientLocal)
    dp = DomainParticipant(domain)
    topic = Topic(dp, topic_name, Vehicle)
    subscriber = Subscriber(dp, qos=Qos(Policy.Partition(["fleet"])))
    listener = Counter()
    reader = DataReader(subscriber, topic, qos=qos, listener=listener)
    waitset = WaitSet(dp)
    waitset.attach(ReadCondition(reader, SampleState.NotRead | ViewState.Any
                                 | InstanceState.Any))
    seen = {}
    disposed = False
    deadline = time.monotonic() + 20
    while (len(seen) < count or not disposed) and time.monotonic() < deadline:
        waitset.wait(duration(milliseconds=200))
        # read first (the samples stay, now READ), then take them
        peeked = reader.read(N=100)
        for s in reader.take(N=100):
            info = s.sample_info
            vehicle = s if info.valid_data else s.key_sample
            if info.valid_data:
                seen.setdefault(s.id, line(s))
            if info.instance_state == InstanceState.NotAliveDisposed and vehicle.id == 0:
                disposed = True
        if peeked and not listener.event.is_set():
            listener.event.wait(1.0)
    for i in sorted(seen):
        print(seen[i])
    print(f"disposed 0: {disposed}")
    print(f"listener called: {listener.calls > 0}")
    return 0 if len(seen) == count and disposed else 1


if __name__ == "__main__":
    sys.exit(main())
