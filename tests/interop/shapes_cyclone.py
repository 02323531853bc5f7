#!/usr/bin/env python3
"""Cyclone DDS shape application: the OMG interoperability suite's `shape_main`, on PyPI's
`cyclonedds` (tested with 11.0.1), for FerroDDS's `shape_main` tests.

It takes the suite's options (getopt syntax, as srcCxx/shape_main.cxx in omg-dds/dds-rtps)
and prints the lines the suite matches: `Create topic: T`, `Create writer for topic: T
color: C`, `Create reader for topic: T` (`T_filtered` with -c), the listener lines
(`on_publication_matched() topic: 'T'  type: 'ShapeType' : matched readers 1 (change = 1)`
and the like), one `"%-10s %-10s %03d %03d [%d]"` line per sample (` {N}` appended with the
last byte of additional_payload_size) and `T C NOT_ALIVE_..._INSTANCE_STATE` lines.

It behaves as Cyclone DDS's own shape application (srcC/shape_main.c) does where that one
makes choices: --cft, --coherent and --ordered are refused with "not supported"; TRANSIENT
and PERSISTENT durability are passed to Cyclone as they are; a writer's
autodispose_unregistered_instances is off only with --final-instance-state u. One
difference: Cyclone's application makes a subscriber's -c a Cyclone topic filter; from
Python that deadlocks (the filter runs in Cyclone's receive thread and needs the GIL, which
take() holds while it waits for the reader's lock the receive thread holds), so here the
reader takes every color and the application prints only the one asked for.

SIGINT (how the suite stops applications) ends the main loop cleanly; SIGUSR1 prints every
thread's stack on stderr. Exit status: 0 after "Done.", 1 bad options, 2 entities not
created / not supported.

Unless CYCLONEDDS_URI is set (and non-empty), Cyclone is pinned to loopback with SPDP
over multicast, as tests/interop/cyclone_peer.py does.
"""

import faulthandler
import getopt
import os
import random
import signal
import sys
import threading
import time

DEFAULT_URI = (
    '<CycloneDDS><Domain id="any"><General><Interfaces>'
    '<NetworkInterface name="lo" multicast="true"/></Interfaces>'
    '<AllowMulticast>spdp</AllowMulticast></General></Domain></CycloneDDS>'
)
if not os.environ.get("CYCLONEDDS_URI"):
    os.environ["CYCLONEDDS_URI"] = DEFAULT_URI

from dataclasses import dataclass  # noqa: E402

from cyclonedds.core import InstanceState, Listener  # noqa: E402
from cyclonedds.domain import DomainParticipant  # noqa: E402
from cyclonedds.idl import IdlStruct  # noqa: E402
from cyclonedds.idl.annotations import appendable, key  # noqa: E402
from cyclonedds.idl.types import bounded_str, int32, sequence, uint8  # noqa: E402
from cyclonedds.pub import DataWriter, Publisher  # noqa: E402
from cyclonedds.qos import Policy, Qos  # noqa: E402
from cyclonedds.sub import DataReader, Subscriber  # noqa: E402
from cyclonedds.topic import Topic  # noqa: E402
from cyclonedds.util import duration  # noqa: E402


@appendable
@dataclass
class ShapeType(IdlStruct, typename="ShapeType"):
    color: bounded_str[128]
    key("color")
    x: int32
    y: int32
    shapesize: int32
    additional_payload_size: sequence[uint8]


TYPE_NAME = "ShapeType"

# Writers and readers, whose listeners are removed before the participant is deleted: a
# listener callback running during the deletion can deadlock it.
ENDPOINTS = []

# ----------------------------------------------------------------- output ----

_PRINT = threading.Lock()


def out(line):
    """One line on stdout, flushed (listeners print from Cyclone's threads)."""
    with _PRINT:
        try:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()
        except BrokenPipeError:
            stop()


DEBUG = False


def debug(line):
    if DEBUG:
        out(line)


def pad10(s):
    """C's %-10s (by bytes)."""
    return s + " " * max(0, 10 - len(s.encode()))


def sample_line(topic, s):
    line = "%s %s %03d %03d [%d]" % (pad10(topic), pad10(s.color), s.x, s.y, s.shapesize)
    if len(s.additional_payload_size) > 0:
        line += " {%u}" % s.additional_payload_size[-1]
    return line


# Cyclone DDS's QosPolicyId numbering (dds_public_qosdefs.h): after DURABILITYSERVICE (22) come
# PROPERTY (23), TYPE_CONSISTENCY_ENFORCEMENT (24) and DATAREPRESENTATION (25), where
# DDS-XTypes has DATA_REPRESENTATION 23 and TYPE_CONSISTENCY_ENFORCEMENT 24.
POLICY_NAMES = {
    1: "USERDATA", 2: "DURABILITY", 3: "PRESENTATION", 4: "DEADLINE", 5: "LATENCYBUDGET",
    6: "OWNERSHIP", 7: "OWNERSHIPSTRENGTH", 8: "LIVELINESS", 9: "TIMEBASEDFILTER",
    10: "PARTITION", 11: "RELIABILITY", 12: "DESTINATIONORDER", 13: "HISTORY",
    14: "RESOURCELIMITS", 15: "ENTITYFACTORY", 16: "WRITERDATALIFECYCLE",
    17: "READERDATALIFECYCLE", 18: "TOPICDATA", 19: "GROUPDATA", 20: "TRANSPORTPRIORITY",
    21: "LIFESPAN", 22: "DURABILITYSERVICE", 23: "PROPERTY", 24: "TYPE_CONSISTENCY_ENFORCEMENT",
    25: "DATAREPRESENTATION",
}


class ShapeListener(Listener):
    """The suite application's listener lines."""

    def __init__(self, topic):
        super().__init__()
        self.topic = topic

    def _head(self, function):
        return "%s() topic: '%s'  type: '%s' : " % (function, self.topic, TYPE_NAME)

    def on_publication_matched(self, writer, status):
        out(self._head("on_publication_matched") + "matched readers %d (change = %d)"
            % (status.current_count, status.current_count_change))

    def on_subscription_matched(self, reader, status):
        out(self._head("on_subscription_matched") + "matched writers %d (change = %d)"
            % (status.current_count, status.current_count_change))

    def on_offered_incompatible_qos(self, writer, status):
        out(self._head("on_offered_incompatible_qos") + "%d (%s)"
            % (status.last_policy_id, POLICY_NAMES.get(status.last_policy_id, "Unknown")))

    def on_requested_incompatible_qos(self, reader, status):
        out(self._head("on_requested_incompatible_qos") + "%d (%s)"
            % (status.last_policy_id, POLICY_NAMES.get(status.last_policy_id, "Unknown")))

    def on_offered_deadline_missed(self, writer, status):
        out(self._head("on_offered_deadline_missed") + "(total = %d, change = %d)"
            % (status.total_count, status.total_count_change))

    def on_requested_deadline_missed(self, reader, status):
        out(self._head("on_requested_deadline_missed") + "(total = %d, change = %d)"
            % (status.total_count, status.total_count_change))


# ---------------------------------------------------------------- options ----

SHORT = "hPSbrRwc:d:D:f:k:p:s:x:t:v:z:"
LONG = [
    "help", "write-period=", "read-period=", "final-instance-state=", "access-scope=",
    "coherent", "ordered", "coherent-sample-count=", "additional-payload-size=",
    "num-topics=", "lifespan=", "num-instances=", "num-iterations=", "take-read",
    "time-filter=", "periodic-announcement=", "datafrag-size=", "cft=", "size-modulo=",
]


class Options:
    def __init__(self):
        self.publish = False
        self.subscribe = False
        self.domain = 0
        self.reliable = True
        self.durability = "v"
        self.representation = 1
        self.history_depth = -1
        self.ownership_strength = -1
        self.topic = None
        self.color = None
        self.partition = None
        self.time_filter_ms = 0
        self.deadline_ms = 0
        self.lifespan_ms = 0
        self.shapesize = 20
        self.print_writer_samples = False
        self.use_read = False
        self.write_period_ms = 33
        self.read_period_ms = 100
        self.num_iterations = 0
        self.num_instances = 1
        self.num_topics = 1
        self.final_state = None
        self.coherent = False
        self.ordered = False
        self.additional_payload_size = 0
        self.take_read_next_instance = True
        self.datafrag_size = 0
        self.cft = None
        self.size_modulo = 0


def parse(argv):
    """Options, or (errors) as a list of lines."""
    global DEBUG
    o = Options()
    errors = []
    try:
        opts, _rest = getopt.gnu_getopt(argv, SHORT, LONG)
    except getopt.GetoptError as e:
        return None, [str(e)]

    def number(name, text, minimum):
        try:
            v = int(text)
        except ValueError:
            errors.append("unrecognized value for %s %s" % (name, text))
            return None
        if v < minimum:
            errors.append("incorrect value for %s %d" % (name, v))
            return None
        return v

    for opt, val in opts:
        if opt in ("-h", "--help"):
            print(__doc__)
            sys.exit(0)
        elif opt == "-v":
            if val[:1] == "d":
                DEBUG = True
            elif val[:1] != "e":
                errors.append("unrecognized value for verbosity " + val[:1])
        elif opt == "-P":
            o.publish = True
        elif opt == "-S":
            o.subscribe = True
        elif opt == "-b":
            o.reliable = False
        elif opt == "-r":
            o.reliable = True
        elif opt == "-R":
            o.use_read = True
        elif opt == "-w":
            o.print_writer_samples = True
        elif opt == "-c":
            o.color = val
        elif opt == "-d":
            o.domain = number("domain_id", val, 0) or 0
        elif opt == "-D":
            if val[:1] in ("v", "l", "t", "p"):
                o.durability = val[:1]
            else:
                errors.append("unrecognized value for durability " + val[:1])
        elif opt == "-f":
            o.deadline_ms = number("deadline_interval", val, 0) or 0
        elif opt == "-k":
            v = number("history_depth", val, 0)
            o.history_depth = -1 if v is None else v
        elif opt == "-p":
            o.partition = val
        elif opt == "-s":
            v = number("ownership_strength", val, -1)
            o.ownership_strength = -1 if v is None else v
        elif opt == "-x":
            if val[:1] in ("1", "2"):
                o.representation = int(val[:1])
            else:
                errors.append("unrecognized value for data representation " + val[:1])
        elif opt == "-t":
            o.topic = val
        elif opt == "-z":
            v = number("shapesize", val, 0)
            o.shapesize = 20 if v is None else v
        elif opt == "--write-period":
            o.write_period_ms = number("write-period", val, 0) or 0
        elif opt == "--read-period":
            o.read_period_ms = number("read-period", val, 0) or 0
        elif opt == "--time-filter":
            o.time_filter_ms = number("timebasedfilter_interval", val, 0) or 0
        elif opt == "--lifespan":
            o.lifespan_ms = number("lifespan", val, 0) or 0
        elif opt == "--num-iterations":
            o.num_iterations = number("num-iterations", val, 1) or 0
        elif opt == "--num-instances":
            o.num_instances = number("num-instances", val, 1) or 1
        elif opt == "--num-topics":
            o.num_topics = number("num-topics", val, 1) or 1
        elif opt == "--final-instance-state":
            if val[:1] == "u":
                o.final_state = "u"
            elif val[:1] == "d":
                o.final_state = "d"
            else:
                errors.append("unrecognized value for final-instance-state " + val[:1])
        elif opt == "--access-scope":
            if val[:1] not in ("i", "t", "g"):
                errors.append("unrecognized value for coherent-sets " + val[:1])
        elif opt == "--coherent":
            o.coherent = True
        elif opt == "--ordered":
            o.ordered = True
        elif opt == "--coherent-sample-count":
            number("coherent-sample-count", val, 2)
        elif opt == "--additional-payload-size":
            o.additional_payload_size = number("additional-payload-size", val, 1) or 0
        elif opt == "--take-read":
            o.take_read_next_instance = False
        elif opt == "--periodic-announcement":
            number("periodic-announcement", val, 0)
        elif opt == "--datafrag-size":
            o.datafrag_size = number("datafrag-size", val, 0) or 0
        elif opt == "--cft":
            o.cft = val
        elif opt == "--size-modulo":
            o.size_modulo = number("size-modulo", val, 1) or 0

    if o.topic is None:
        errors.append("please specify topic name [-t]")
    if not o.publish and not o.subscribe:
        errors.append("please specify publish [-P] or subscribe [-S]")
    if o.publish and o.subscribe:
        errors.append("please specify only one of: publish [-P] or subscribe [-S]")
    if o.publish and o.color is None:
        o.color = "BLUE"
        out('warning: color was not specified, defaulting to "BLUE"')
    if o.subscribe and o.color is not None and o.cft is not None:
        errors.append("error: cannot specify both --cft and -c for subscriber applications")
    return (None, errors) if errors else (o, [])


# -------------------------------------------------------------------- QoS ----

def ms(n):
    return duration(milliseconds=n)


def endpoint_qos(o, writer):
    p = []
    if o.reliable:
        p.append(Policy.Reliability.Reliable(max_blocking_time=ms(100)))
    else:
        p.append(Policy.Reliability.BestEffort)
    p.append({
        "v": Policy.Durability.Volatile,
        "l": Policy.Durability.TransientLocal,
        "t": Policy.Durability.Transient,
        "p": Policy.Durability.Persistent,
    }[o.durability])
    p.append(Policy.DataRepresentation(use_cdrv0_representation=o.representation == 1,
                                       use_xcdrv2_representation=o.representation == 2))
    if o.history_depth > 0:
        p.append(Policy.History.KeepLast(o.history_depth))
    elif o.history_depth == 0:
        p.append(Policy.History.KeepAll)
    if o.deadline_ms > 0:
        p.append(Policy.Deadline(ms(o.deadline_ms)))
    if o.ownership_strength >= 0:
        p.append(Policy.Ownership.Exclusive)
        if writer:
            p.append(Policy.OwnershipStrength(o.ownership_strength))
    else:
        p.append(Policy.Ownership.Shared)
    if writer:
        if o.lifespan_ms > 0:
            p.append(Policy.Lifespan(ms(o.lifespan_ms)))
        p.append(Policy.WriterDataLifecycle(autodispose=o.final_state != "u"))
    elif o.time_filter_ms > 0:
        p.append(Policy.TimeBasedFilter(ms(o.time_filter_ms)))
    return Qos(*p)


# -------------------------------------------------------------------- run ----

# Set by SIGINT/SIGTERM. A plain flag: a signal handler must not take a lock the
# interrupted code may hold (threading.Event.set() from a handler can deadlock with the
# Event.wait() it interrupted).
STOPPED = False


def stop(*_):
    global STOPPED
    STOPPED = True


def sleep(ms_):
    """Sleeps ms_ milliseconds in short steps, returning early once stopped."""
    end = time.monotonic() + ms_ / 1000.0
    while not STOPPED:
        left = end - time.monotonic()
        if left <= 0:
            return
        time.sleep(min(left, 0.02))


def topic_names(o):
    return [o.topic + (str(i) if i > 0 else "") for i in range(o.num_topics)]


def run_publisher(dp, topics, o):
    if o.coherent or o.ordered:
        out("    Presentation Access Scope = not supported")
        return 2
    if o.datafrag_size > 0:
        out("    Data Fragmentation Size = not supported")
        return 2
    pub_qos = Qos(Policy.Partition([o.partition])) if o.partition is not None else None
    publisher = Publisher(dp, qos=pub_qos)
    qos = endpoint_qos(o, writer=True)
    writers = []
    for t in topics:
        out("Create writer for topic: %s color: %s" % (t.name, o.color))
        w = DataWriter(publisher, t, qos=qos, listener=ShapeListener(t.name))
        ENDPOINTS.append(w)
        writers.append((t.name, w))
    width, height = 240, 270
    shape = ShapeType(color=o.color, x=random.randrange(width), y=random.randrange(height),
                      shapesize=o.shapesize,
                      additional_payload_size=[255] * o.additional_payload_size)
    xvel = random.randint(1, 5) * random.choice((-1, 1))
    yvel = random.randint(1, 5) * random.choice((-1, 1))
    colors = [o.color + (str(j) if j > 0 else "") for j in range(o.num_instances)]
    n = 0
    while not STOPPED:
        shape.x += xvel
        shape.y += yvel
        if shape.x < 0:
            shape.x, xvel = 0, -xvel
        if shape.x > width:
            shape.x, xvel = width, -xvel
        if shape.y < 0:
            shape.y, yvel = 0, -yvel
        if shape.y > height:
            shape.y, yvel = height, -yvel
        if o.shapesize == 0:
            if o.size_modulo > 0:
                shape.shapesize = shape.shapesize % o.size_modulo + 1
            else:
                shape.shapesize += 1
        for name, w in writers:
            for c in colors:
                shape.color = c
                w.write(shape)
                if o.print_writer_samples:
                    out(sample_line(name, shape))
        sleep(o.write_period_ms)
        n += 1
        if o.num_iterations and n >= o.num_iterations:
            break
    for _name, w in writers:
        for c in colors:
            shape.color = c
            if o.final_state == "u":
                w.unregister_instance(shape)
            elif o.final_state == "d":
                w.dispose(shape)
    for _name, w in writers:
        w.wait_for_acks(duration(seconds=1))
    return 0


def run_subscriber(dp, topics, o):
    if o.cft is not None:
        out("ContentFilterTopic Not Supported")
        return 2
    if o.coherent or o.ordered:
        out("    Presentation Access Scope = not supported")
        return 2
    sub_qos = Qos(Policy.Partition([o.partition])) if o.partition is not None else None
    subscriber = Subscriber(dp, qos=sub_qos)
    qos = endpoint_qos(o, writer=False)
    readers = []
    for t in topics:
        if o.color is not None:
            out("Create reader for topic: %s_filtered" % t.name)
        else:
            out("Create reader for topic: %s" % t.name)
        r = DataReader(subscriber, t, qos=qos, listener=ShapeListener(t.name))
        ENDPOINTS.append(r)
        readers.append((t.name, r))
    n = 0
    while not STOPPED:
        for name, r in readers:
            samples = r.read(N=1000000) if o.use_read else r.take(N=1000000)
            if o.take_read_next_instance:
                samples.sort(key=lambda s: s.sample_info.instance_handle)
            for s in samples:
                info = s.sample_info
                color = s.color if info.valid_data else s.key_sample.color
                if o.color is not None and color != o.color:
                    continue  # -c: only this color (see the module documentation)
                if info.valid_data:
                    out(sample_line(name, s))
                if info.instance_state == InstanceState.NotAliveNoWriters:
                    out("%s %s NOT_ALIVE_NO_WRITERS_INSTANCE_STATE" % (pad10(name), pad10(color)))
                elif info.instance_state == InstanceState.NotAliveDisposed:
                    out("%s %s NOT_ALIVE_DISPOSED_INSTANCE_STATE" % (pad10(name), pad10(color)))
        n += 1
        if o.num_iterations and n >= o.num_iterations:
            break
        sleep(o.read_period_ms)
    return 0


def main(argv):
    o, errors = parse(argv)
    if o is None:
        for e in errors:
            out(e)
        return 1
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    # SIGUSR1 prints every thread's stack on stderr (the tests ask before killing a hung
    # application).
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    dp = DomainParticipant(o.domain)
    topics = []
    for name in topic_names(o):
        out("Create topic: %s" % name)
        topics.append(Topic(dp, name, ShapeType))
    code = run_publisher(dp, topics, o) if o.publish else run_subscriber(dp, topics, o)
    if code == 0:
        out("Done.")
    sys.stdout.flush()
    for e in ENDPOINTS:
        e.set_listener(None)
    # Skip the interpreter's teardown (Cyclone deletes its entities in an atexit handler;
    # deleting the participant here says goodbye and, with autodispose, disposes).
    dp._delete(dp._ref)  # noqa: SLF001
    os._exit(code)


if __name__ == "__main__":
    main(sys.argv[1:])
