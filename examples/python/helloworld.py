"""A cyclonedds-python program, run on FerroDDS by its imports alone.

    pip install ./crates/ferrodds-py
    python examples/python/helloworld.py
"""

from dataclasses import dataclass

from ferrodds.core import Policy, Qos
from ferrodds.domain import DomainParticipant
from ferrodds.idl import IdlStruct
from ferrodds.idl.annotations import key
from ferrodds.idl.types import int32
from ferrodds.pub import DataWriter
from ferrodds.sub import DataReader
from ferrodds.topic import Topic
from ferrodds.util import duration


@dataclass
class Message(IdlStruct, typename="HelloWorld::Msg"):
    id: int32
    key("id")
    text: str


dp = DomainParticipant(0)
topic = Topic(dp, "HelloWorldTopic", Message)
qos = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.History.KeepLast(10))
reader = DataReader(dp, topic, qos=qos)
writer = DataWriter(dp, topic, qos=qos)

writer.write(Message(id=1, text="Hello from FerroDDS"))
for sample in reader.take_iter(timeout=duration(seconds=2)):
    print(sample, sample.sample_info.instance_state)
    break
