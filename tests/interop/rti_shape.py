#!/usr/bin/env python3
"""RTI Connext DDS shape application: the OMG interoperability suite's `shape_main`, on
PyPI's `rticonnextdds-connector` (tested with 1.2.4, which embeds Connext 6.1.2), for
FerroDDS's `shape_main` tests. See rti_shape.md.

Same options and output as shapes_cyclone.py (getopt syntax, as srcCxx/shape_main.cxx in
omg-dds/dds-rtps): `Create topic: T`, `Create writer for topic: T color: C`, `Create reader
for topic: T` (`T_filtered` with -c), `on_publication_matched()` / `on_subscription_matched()`
lines (the connector has no listeners: the matched count is polled once per write/read
period), one `"%-10s %-10s %03d %03d [%d]"` line per sample (` {N}` appended with the last
byte of additional_payload_size), `T C NOT_ALIVE_..._INSTANCE_STATE` lines and `Done.`.

The connector takes its entities and QoS from an XML document, generated here from the
options. RTI's defaults are kept except: loopback-only UDPv4 (no shared memory), the QoS the
options ask for, and autodispose_unregistered_instances off with --final-instance-state u
(as shapes_cyclone.py), and asynchronous publishing for samples over 63,000 bytes (which
Connext 6.1 fragments only then). A subscriber's -c filters locally (no content-filtered topic);
--cft makes a real RTI content filter (SQL expression). --coherent, and the listener lines
for incompatible QoS and deadlines, are not available through the connector.

Exit status: 0 after "Done.", 1 bad options, 2 entities not created / not supported.
"""

import getopt
import os
import random
import signal
import sys
import tempfile
import time
from xml.sax.saxutils import escape

# ----------------------------------------------------------------- output ----


def out(line):
    try:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        stop()


def pad10(s):
    """C's %-10s (by bytes)."""
    return s + " " * max(0, 10 - len(s.encode()))


def sample_line(topic, color, x, y, size, payload):
    line = "%s %s %03d %03d [%d]" % (pad10(topic), pad10(color), x, y, size)
    if payload:
        line += " {%u}" % payload[-1]
    return line


TYPE_NAME = "ShapeType"

# ---------------------------------------------------------------- options ----

SHORT = "hPSbrRwc:d:D:f:k:p:s:x:t:v:z:"
LONG = [
    "help", "write-period=", "read-period=", "final-instance-state=", "access-scope=",
    "coherent", "ordered", "coherent-sample-count=", "additional-payload-size=",
    "num-topics=", "lifespan=", "num-instances=", "num-iterations=", "take-read",
    "time-filter=", "periodic-announcement=", "datafrag-size=", "cft=", "size-modulo=",
]


class Options:
    publish = subscribe = False
    domain = 0
    reliable = True
    durability = "v"
    representation = 1
    history_depth = -1
    ownership_strength = -1
    topic = color = partition = cft = final_state = None
    time_filter_ms = deadline_ms = lifespan_ms = 0
    shapesize = 20
    print_writer_samples = use_read = False
    write_period_ms = 33
    read_period_ms = 100
    num_iterations = 0
    num_instances = num_topics = 1
    coherent = ordered = False
    access_scope = "i"
    additional_payload_size = 0
    take_read_next_instance = True
    announcement_ms = datafrag_size = size_modulo = 0


def parse(argv):
    """(Options, []) or (None, error lines)."""
    o = Options()
    errors = []
    try:
        opts, _rest = getopt.gnu_getopt(argv, SHORT, LONG)
    except getopt.GetoptError as e:
        return None, [str(e)]

    def number(name, text, minimum, default):
        try:
            v = int(text)
        except ValueError:
            errors.append("unrecognized value for %s %s" % (name, text))
            return default
        if v < minimum:
            errors.append("incorrect value for %s %d" % (name, v))
            return default
        return v

    for opt, val in opts:
        if opt in ("-h", "--help"):
            print(__doc__)
            sys.exit(0)
        elif opt == "-v":
            if val[:1] not in ("d", "e"):
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
            o.domain = number("domain_id", val, 0, 0)
        elif opt == "-D":
            if val[:1] in ("v", "l", "t", "p"):
                o.durability = val[:1]
            else:
                errors.append("unrecognized value for durability " + val[:1])
        elif opt == "-f":
            o.deadline_ms = number("deadline_interval", val, 0, 0)
        elif opt == "-k":
            o.history_depth = number("history_depth", val, 0, -1)
        elif opt == "-p":
            o.partition = val
        elif opt == "-s":
            o.ownership_strength = number("ownership_strength", val, -1, -1)
        elif opt == "-x":
            if val[:1] in ("1", "2"):
                o.representation = int(val[:1])
            else:
                errors.append("unrecognized value for data representation " + val[:1])
        elif opt == "-t":
            o.topic = val
        elif opt == "-z":
            o.shapesize = number("shapesize", val, 0, 20)
        elif opt == "--write-period":
            o.write_period_ms = number("write-period", val, 0, 0)
        elif opt == "--read-period":
            o.read_period_ms = number("read-period", val, 0, 0)
        elif opt == "--time-filter":
            o.time_filter_ms = number("timebasedfilter_interval", val, 0, 0)
        elif opt == "--lifespan":
            o.lifespan_ms = number("lifespan", val, 0, 0)
        elif opt == "--num-iterations":
            o.num_iterations = number("num-iterations", val, 1, 0)
        elif opt == "--num-instances":
            o.num_instances = number("num-instances", val, 1, 1)
        elif opt == "--num-topics":
            o.num_topics = number("num-topics", val, 1, 1)
        elif opt == "--final-instance-state":
            if val[:1] in ("u", "d"):
                o.final_state = val[:1]
            else:
                errors.append("unrecognized value for final-instance-state " + val[:1])
        elif opt == "--access-scope":
            if val[:1] in ("i", "t", "g"):
                o.access_scope = val[:1]
            else:
                errors.append("unrecognized value for coherent-sets " + val[:1])
        elif opt == "--coherent":
            o.coherent = True
        elif opt == "--ordered":
            o.ordered = True
        elif opt == "--coherent-sample-count":
            number("coherent-sample-count", val, 2, 0)
        elif opt == "--additional-payload-size":
            o.additional_payload_size = number("additional-payload-size", val, 1, 0)
        elif opt == "--take-read":
            o.take_read_next_instance = False
        elif opt == "--periodic-announcement":
            o.announcement_ms = number("periodic-announcement", val, 0, 0)
        elif opt == "--datafrag-size":
            o.datafrag_size = number("datafrag-size", val, 0, 0)
        elif opt == "--cft":
            o.cft = val
        elif opt == "--size-modulo":
            o.size_modulo = number("size-modulo", val, 1, 0)

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


# -------------------------------------------------------------------- XML ----

TYPES = """<types>
  <struct name="ShapeType" extensibility="appendable">
    <member name="color" type="string" stringMaxLength="128" key="true"/>
    <member name="x" type="int32"/>
    <member name="y" type="int32"/>
    <member name="shapesize" type="int32"/>
    <member name="additional_payload_size" type="uint8" sequenceMaxLength="-1"/>
  </struct>
</types>"""


def attr(s):
    return escape(s, {'"': "&quot;"})


def duration(ms_):
    return "<sec>%d</sec><nanosec>%d</nanosec>" % (ms_ // 1000, ms_ % 1000 * 1000000)


def prop(name, value):
    return "<element><name>%s</name><value>%s</value></element>" % (name, escape(value))


def participant_qos(o):
    props = [prop("dds.transport.UDPv4.builtin.parent.allow_interfaces_list", "127.0.0.1")]
    if o.datafrag_size > 0:
        props.append(prop("dds.transport.UDPv4.builtin.parent.message_size_max",
                          str(o.datafrag_size)))
    q = ("<transport_builtin><mask>UDPv4</mask></transport_builtin>"
         "<discovery><initial_peers><element>239.255.0.1</element>"
         "<element>127.0.0.1</element></initial_peers></discovery>"
         "<property><value>%s</value></property>" % "".join(props))
    if o.announcement_ms > 0:
        q += ("<discovery_config><participant_liveliness_assert_period>%s"
              "</participant_liveliness_assert_period></discovery_config>"
              % duration(o.announcement_ms))
    return "<participant_qos>%s</participant_qos>" % q


def group_qos(o):
    """Publisher / subscriber QoS: partition, presentation."""
    q = ""
    if o.partition is not None:
        q += "<partition><name><element>%s</element></name></partition>" % escape(o.partition)
    if o.ordered:
        scope = {"i": "INSTANCE", "t": "TOPIC", "g": "GROUP"}[o.access_scope]
        q += ("<presentation><access_scope>%s_PRESENTATION_QOS</access_scope>"
              "<ordered_access>true</ordered_access></presentation>" % scope)
    return q


# The largest sample Connext 6.1 sends from the writing thread: a larger one is fragmented,
# which it does only with asynchronous publishing (RTI's perftest switches it on above this;
# without it the write fails).
RTI_SYNCHRONOUS_MAX = 63000


def endpoint_qos(o, writer):
    q = "<reliability><kind>%s_RELIABILITY_QOS</kind></reliability>" % (
        "RELIABLE" if o.reliable else "BEST_EFFORT")
    q += "<durability><kind>%s_DURABILITY_QOS</kind></durability>" % {
        "v": "VOLATILE", "l": "TRANSIENT_LOCAL", "t": "TRANSIENT", "p": "PERSISTENT",
    }[o.durability]
    q += "<representation><value><element>%s_DATA_REPRESENTATION</element></value>" \
         "</representation>" % ("XCDR" if o.representation == 1 else "XCDR2")
    if o.history_depth > 0:
        q += "<history><kind>KEEP_LAST_HISTORY_QOS</kind><depth>%d</depth></history>" \
             % o.history_depth
    elif o.history_depth == 0:
        q += "<history><kind>KEEP_ALL_HISTORY_QOS</kind></history>"
    if o.deadline_ms > 0:
        q += "<deadline><period>%s</period></deadline>" % duration(o.deadline_ms)
    if o.ownership_strength >= 0:
        q += "<ownership><kind>EXCLUSIVE_OWNERSHIP_QOS</kind></ownership>"
        if writer:
            q += "<ownership_strength><value>%d</value></ownership_strength>" \
                 % o.ownership_strength
    if writer:
        if o.additional_payload_size > RTI_SYNCHRONOUS_MAX:
            q += "<publish_mode><kind>ASYNCHRONOUS_PUBLISH_MODE_QOS</kind></publish_mode>"
        if o.lifespan_ms > 0:
            q += "<lifespan><duration>%s</duration></lifespan>" % duration(o.lifespan_ms)
        if o.final_state == "u":
            q += ("<writer_data_lifecycle><autodispose_unregistered_instances>false"
                  "</autodispose_unregistered_instances></writer_data_lifecycle>")
    elif o.time_filter_ms > 0:
        q += "<time_based_filter><minimum_separation>%s</minimum_separation>" \
             "</time_based_filter>" % duration(o.time_filter_ms)
    # The unbounded sequence: without this, RTI preallocates 2 GB samples and fails.
    q += "<property><value>%s</value></property>" % prop(
        "dds.data_%s.history.memory_manager.fast_pool.pool_buffer_max_size"
        % ("writer" if writer else "reader"), "65536")
    kind = "datawriter_qos" if writer else "datareader_qos"
    return "<%s>%s</%s>" % (kind, q, kind)


def topic_names(o):
    return [o.topic + (str(i) if i > 0 else "") for i in range(o.num_topics)]


def config(o):
    """The connector's XML document: participant "Shapes::App"; endpoints g::e0, g::e1, ..."""
    topics = "".join('<topic name="%s" register_type_ref="ShapeType"/>' % attr(t)
                     for t in topic_names(o))
    endpoints = ""
    for i, t in enumerate(topic_names(o)):
        if o.publish:
            endpoints += '<data_writer name="e%d" topic_ref="%s">%s</data_writer>' % (
                i, attr(t), endpoint_qos(o, writer=True))
        else:
            cft = ""
            if o.cft is not None:
                cft = ('<content_filter name="%s_filtered" kind="builtin.sql">'
                       "<expression>%s</expression></content_filter>" % (attr(t), escape(o.cft)))
            endpoints += '<data_reader name="e%d" topic_ref="%s">%s%s</data_reader>' % (
                i, attr(t), cft, endpoint_qos(o, writer=False))
    group = "publisher" if o.publish else "subscriber"
    return """<dds>
%s
<domain_library name="Domains">
  <domain name="D" domain_id="%d">
    <register_type name="%s" type_ref="ShapeType"/>%s
  </domain>
</domain_library>
<domain_participant_library name="Shapes">
  <domain_participant name="App" domain_ref="Domains::D">%s
    <%s name="g"><%s_qos>%s</%s_qos>%s</%s>
  </domain_participant>
</domain_participant_library>
</dds>
""" % (TYPES, o.domain, TYPE_NAME, topics, participant_qos(o), group, group, group_qos(o),
       group, endpoints, group)


# -------------------------------------------------------------------- run ----

# Set by SIGINT/SIGTERM (how the suite stops applications).
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


class Matched:
    """Polls an endpoint's matched count; prints the listener line when it changes."""

    def __init__(self, topic, endpoint, writer):
        self.topic, self.endpoint, self.writer, self.count = topic, endpoint, writer, 0

    def poll(self):
        if self.writer:
            n = len(self.endpoint.matched_subscriptions)
        else:
            n = len(self.endpoint.matched_publications)
        if n != self.count:
            out("%s() topic: '%s'  type: '%s' : matched %s %d (change = %d)" % (
                "on_publication_matched" if self.writer else "on_subscription_matched",
                self.topic, TYPE_NAME, "readers" if self.writer else "writers", n,
                n - self.count))
            self.count = n


def run_publisher(connector, o):
    writers = []
    for i, t in enumerate(topic_names(o)):
        out("Create writer for topic: %s color: %s" % (t, o.color))
        w = connector.get_output("g::e%d" % i)
        writers.append((t, w, Matched(t, w, writer=True)))
    width, height = 240, 270
    x, y, size = random.randrange(width), random.randrange(height), o.shapesize
    payload = [255] * o.additional_payload_size
    xvel = random.randint(1, 5) * random.choice((-1, 1))
    yvel = random.randint(1, 5) * random.choice((-1, 1))
    colors = [o.color + (str(j) if j > 0 else "") for j in range(o.num_instances)]
    n = 0
    while not STOPPED:
        x += xvel
        y += yvel
        if x < 0:
            x, xvel = 0, -xvel
        if x > width:
            x, xvel = width, -xvel
        if y < 0:
            y, yvel = 0, -yvel
        if y > height:
            y, yvel = height, -yvel
        if o.shapesize == 0:
            size = size % o.size_modulo + 1 if o.size_modulo > 0 else size + 1
        for name, w, matched in writers:
            matched.poll()
            for c in colors:
                w.instance.set_dictionary({"color": c, "x": x, "y": y, "shapesize": size,
                                           "additional_payload_size": payload})
                w.write()
                if o.print_writer_samples:
                    out(sample_line(name, c, x, y, size, payload))
        sleep(o.write_period_ms)
        n += 1
        if o.num_iterations and n >= o.num_iterations:
            break
    if o.final_state is not None:
        action = "unregister" if o.final_state == "u" else "dispose"
        for _name, w, _m in writers:
            for c in colors:
                w.instance["color"] = c
                w.write(action=action)
    for _name, w, _m in writers:
        try:
            w.wait(1000)
        except Exception:  # noqa: BLE001 (TimeoutError, or best effort)
            pass
    return 0


def run_subscriber(connector, o):
    readers = []
    for i, t in enumerate(topic_names(o)):
        if o.color is not None:
            out("Create reader for topic: %s_filtered" % t)
        else:
            out("Create reader for topic: %s" % t)
        r = connector.get_input("g::e%d" % i)
        readers.append((t, r, Matched(t, r, writer=False)))
    n = 0
    while not STOPPED:
        for name, r, matched in readers:
            matched.poll()
            r.read() if o.use_read else r.take()
            samples = []
            for s in r.samples:
                if s.valid_data:
                    d = s.get_dictionary()
                else:
                    d = {"color": s.get_string("color")}
                samples.append((s.valid_data, s.info["instance_state"], d))
            r.return_samples()
            if o.take_read_next_instance:
                # take_next_instance order: by instance (the connector has no handles;
                # the key is the color).
                samples.sort(key=lambda s: s[2]["color"])
            for valid, state, d in samples:
                color = d["color"]
                if o.color is not None and color != o.color:
                    continue  # -c: only this color (see the module documentation)
                if valid:
                    out(sample_line(name, color, d["x"], d["y"], d["shapesize"],
                                    d.get("additional_payload_size") or []))
                if state == "NOT_ALIVE_NO_WRITERS":
                    out("%s %s NOT_ALIVE_NO_WRITERS_INSTANCE_STATE" % (pad10(name), pad10(color)))
                elif state == "NOT_ALIVE_DISPOSED":
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
    if o.coherent:
        out("    Presentation Access Scope = not supported")
        return 2
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    import rticonnextdds_connector as rti

    fd, path = tempfile.mkstemp(prefix="rti_shape_", suffix=".xml")
    with os.fdopen(fd, "w") as f:
        f.write(config(o))
    try:
        connector = rti.Connector("Shapes::App", path)
    except rti.Error as e:
        out("failed to create participant: %s" % e)
        return 2
    finally:
        os.unlink(path)
    for name in topic_names(o):
        out("Create topic: %s" % name)
    try:
        code = run_publisher(connector, o) if o.publish else run_subscriber(connector, o)
    except rti.Error as e:
        out("error: %s" % e)
        code = 2
    if code == 0:
        out("Done.")
    connector.close()
    return code


if __name__ == "__main__":
    os._exit(main(sys.argv[1:]) or 0)
