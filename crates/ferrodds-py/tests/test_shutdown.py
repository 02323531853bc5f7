"""A program that ends while a listener runs and data flows exits (the last entity dropped
on the thread that holds the GIL must not wait for a FerroDDS thread that waits for it)."""

import subprocess
import sys
import textwrap

# What both programs share: a type, and a listener that takes its time.
PRELUDE = '''
    import gc, threading, time
    from dataclasses import dataclass
    from ferrodds.core import Listener, Policy, Qos
    from ferrodds.domain import DomainParticipant
    from ferrodds.idl import IdlStruct
    from ferrodds.pub import DataWriter
    from ferrodds.sub import DataReader
    from ferrodds.topic import Topic

    @dataclass
    class Tick(IdlStruct, typename="test::Tick"):
        n: int

    class Slow(Listener):
        def on_data_available(self, reader):
            reader.take(N=100)
            time.sleep(0.01)

'''

PROGRAM = textwrap.dedent(PRELUDE + '''    dp = DomainParticipant(49)
    topic = Topic(dp, "shutdown_ticks", Tick)
    qos = Qos(Policy.Reliability.Reliable(10**8), Policy.History.KeepLast(1))
    reader = DataReader(dp, topic, qos=qos, listener=Slow())
    writer = DataWriter(dp, topic, qos=qos)

    def flood():
        n = 0
        while True:
            try:
                writer.write(Tick(n))
            except Exception:
                return
            n += 1

    threading.Thread(target=flood, daemon=True).start()
    time.sleep(1.0)
    print("done", flush=True)
''')


def test_exits_while_a_listener_runs():
    for _ in range(3):
        out = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                             timeout=60)
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stdout.strip() == "done"


DROP_PROGRAM = textwrap.dedent(PRELUDE + '''    qos = Qos(Policy.Reliability.Reliable(10**8), Policy.History.KeepLast(1))
    sender = DomainParticipant(49)
    writer = DataWriter(sender, Topic(sender, "drop_ticks", Tick), qos=qos)
    stop = threading.Event()

    def flood():
        n = 0
        while not stop.is_set():
            writer.write(Tick(n))
            n += 1

    t = threading.Thread(target=flood)
    t.start()
    for round in range(5):
        dp = DomainParticipant(49)
        reader = DataReader(dp, Topic(dp, "drop_ticks", Tick), qos=qos, listener=Slow())
        time.sleep(0.3)
        # The last handles of this participant go while its listener is being called.
        del reader, dp
        gc.collect()
    stop.set()
    t.join()
    print("done", flush=True)
''')


def test_dropping_a_participant_while_its_listener_runs():
    out = subprocess.run([sys.executable, "-c", DROP_PROGRAM], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "done"
