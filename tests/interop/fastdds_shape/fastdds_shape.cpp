// Fast DDS 2.9.1 shape application: the OMG DDS interoperability suite's `shape_main`, on
// Debian's libfastrtps 2.9.1, used by FerroDDS's tests as a real Fast DDS peer.
//
// It takes the options of tests/interop/shapes_cyclone.py (the suite's getopt syntax) and
// prints the same lines, in the same format: `Create topic: T`, `Create writer for topic: T
// color: C`, `Create reader for topic: T` (`T_filtered` with -c or --cft), the listener lines, one
// "%-10s %-10s %03d %03d [%d]" line per sample and `T C NOT_ALIVE_..._INSTANCE_STATE` lines.
//
// The type support (ShapeTypePubSubType) is what fastddsgen generates at build time, so
// serialization and the key hash (getKey) are exactly those of a real Fast DDS application.
//
// Network: UDPv4 only, restricted to 127.0.0.1 (no shared memory, no data sharing), SPDP on
// the default multicast group 239.255.0.1 (needs `ip link set lo multicast on`).
//
// Exit status: 0 after "Done.", 1 bad options, 2 entities not created / not supported.

#include <fastdds/dds/core/LoanableSequence.hpp>
#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/log/Log.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/DataWriterListener.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/DataReaderListener.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/topic/ContentFilteredTopic.hpp>
#include <fastdds/dds/topic/Topic.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>

#include "ShapeTypePubSubTypes.h"
#include "ShapeTypeTypeObject.h"

#include <getopt.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace eprosima::fastdds::dds;
using eprosima::fastrtps::Duration_t;

// ------------------------------------------------------------------ output ----

// Listeners print from Fast DDS's threads: one lock, one flushed line at a time.
static std::mutex print_mutex;
static bool debug_enabled = false;

static void out(const char* fmt, ...)
{
    std::lock_guard<std::mutex> guard(print_mutex);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    fflush(stdout);
}

#define DEBUG(...) do { if (debug_enabled) out(__VA_ARGS__); } while (0)

static void print_sample(const std::string& topic, const ShapeType& s)
{
    std::lock_guard<std::mutex> guard(print_mutex);
    printf("%-10s %-10s %03d %03d [%d]", topic.c_str(), s.color().c_str(), s.x(), s.y(), s.shapesize());
    if (!s.additional_payload_size().empty())
    {
        printf(" {%u}", static_cast<unsigned>(s.additional_payload_size().back()));
    }
    fputc('\n', stdout);
    fflush(stdout);
}

// Fast DDS's QosPolicyId_t numbering (fastdds/dds/core/policy/QosPolicies.hpp), which follows
// DDS-XTypes (DATAREPRESENTATION 23), unlike Cyclone's (see shapes_cyclone.py).
static const char* policy_name(int id)
{
    static const char* names[] = {
        "INVALID", "USERDATA", "DURABILITY", "PRESENTATION", "DEADLINE", "LATENCYBUDGET",
        "OWNERSHIP", "OWNERSHIPSTRENGTH", "LIVELINESS", "TIMEBASEDFILTER", "PARTITION",
        "RELIABILITY", "DESTINATIONORDER", "HISTORY", "RESOURCELIMITS", "ENTITYFACTORY",
        "WRITERDATALIFECYCLE", "READERDATALIFECYCLE", "TOPICDATA", "GROUPDATA",
        "TRANSPORTPRIORITY", "LIFESPAN", "DURABILITYSERVICE", "DATAREPRESENTATION",
        "TYPE_CONSISTENCY_ENFORCEMENT",
    };
    return id >= 0 && id < static_cast<int>(sizeof(names) / sizeof(names[0])) ? names[id] : "Unknown";
}

// The suite application's listener lines (the same text as shapes_cyclone.py's).
class ShapeListener : public DataWriterListener, public DataReaderListener
{
public:
    explicit ShapeListener(const std::string& topic)
        : head_tail_("() topic: '" + topic + "'  type: 'ShapeType' : ")
    {
    }

    void on_publication_matched(DataWriter*, const PublicationMatchedStatus& s) override
    {
        out("on_publication_matched%smatched readers %d (change = %d)", head_tail_.c_str(),
                s.current_count, s.current_count_change);
    }

    void on_subscription_matched(DataReader*, const SubscriptionMatchedStatus& s) override
    {
        out("on_subscription_matched%smatched writers %d (change = %d)", head_tail_.c_str(),
                s.current_count, s.current_count_change);
    }

    void on_offered_incompatible_qos(DataWriter*, const OfferedIncompatibleQosStatus& s) override
    {
        out("on_offered_incompatible_qos%s%d (%s)", head_tail_.c_str(), s.last_policy_id,
                policy_name(s.last_policy_id));
    }

    void on_requested_incompatible_qos(DataReader*, const RequestedIncompatibleQosStatus& s) override
    {
        out("on_requested_incompatible_qos%s%d (%s)", head_tail_.c_str(), s.last_policy_id,
                policy_name(s.last_policy_id));
    }

    void on_offered_deadline_missed(DataWriter*, const OfferedDeadlineMissedStatus& s) override
    {
        out("on_offered_deadline_missed%s(total = %d, change = %d)", head_tail_.c_str(),
                s.total_count, s.total_count_change);
    }

    void on_requested_deadline_missed(DataReader*, const RequestedDeadlineMissedStatus& s) override
    {
        out("on_requested_deadline_missed%s(total = %d, change = %d)", head_tail_.c_str(),
                s.total_count, s.total_count_change);
    }

private:
    std::string head_tail_;
};

// ----------------------------------------------------------------- options ----

struct Options
{
    bool publish = false;
    bool subscribe = false;
    int domain = 0;
    bool reliable = true;
    char durability = 'v';
    int representation = 1;
    int history_depth = -1;       // -1: Fast DDS's default (KEEP_LAST 1), 0: KEEP_ALL
    int ownership_strength = -1;  // >= 0: EXCLUSIVE ownership
    std::string topic;
    std::string color;            // empty: not given
    bool has_color = false;
    bool has_partition = false;
    std::string partition;
    int time_filter_ms = 0;
    int deadline_ms = 0;
    int lifespan_ms = 0;
    int shapesize = 20;
    bool print_writer_samples = false;
    bool use_read = false;
    int write_period_ms = 33;
    int read_period_ms = 100;
    int num_iterations = 0;
    int num_instances = 1;
    int num_topics = 1;
    char final_state = 0;         // 'u', 'd' or 0
    bool coherent = false;
    bool ordered = false;
    int additional_payload_size = 0;
    bool take_read_next_instance = true;
    int periodic_announcement_ms = 0;
    int datafrag_size = 0;
    bool has_cft = false;
    std::string cft;              // --cft's filter expression (DDS SQL)
    int size_modulo = 0;
    bool expects_inline_qos = false;  // not a suite option: makes writers send PID_KEY_HASH
};

// Parses an integer option; on error adds a line to `errors` and returns `fallback`.
static int number(const char* name, const char* text, int minimum, int fallback,
        std::vector<std::string>& errors)
{
    char* end = nullptr;
    long v = strtol(text, &end, 10);
    char buf[256];
    if (end == text || *end != '\0')
    {
        snprintf(buf, sizeof buf, "unrecognized value for %s %s", name, text);
        errors.push_back(buf);
        return fallback;
    }
    if (v < minimum)
    {
        snprintf(buf, sizeof buf, "incorrect value for %s %ld", name, v);
        errors.push_back(buf);
        return fallback;
    }
    return static_cast<int>(v);
}

static const char* USAGE =
        "fastdds_shape: Fast DDS 2.9.1 shape application (options as shapes_cyclone.py)\n"
        "  -P|-S publish|subscribe  -t TOPIC  -d DOMAIN  -c COLOR  -b|-r best effort|reliable\n"
        "  -D v|l|t|p durability  -k DEPTH (0 keep all)  -x 1|2  -z SIZE  -s STRENGTH  -p PARTITION\n"
        "  -f DEADLINE_MS  -w  -R (read)  -v e|d  --write-period MS  --read-period MS\n"
        "  --num-iterations N  --num-instances N  --num-topics N  --final-instance-state u|d\n"
        "  --lifespan MS  --time-filter MS  --additional-payload-size N  --size-modulo N\n"
        "  --periodic-announcement MS  --take-read  --expects-inline-qos (not a suite option)\n"
        "  refused (\"not supported\", exit 2): --coherent, --ordered, --datafrag-size\n";

enum LongOnly
{
    WRITE_PERIOD = 1000, READ_PERIOD, FINAL_STATE, ACCESS_SCOPE, COHERENT, ORDERED,
    COHERENT_COUNT, PAYLOAD_SIZE, NUM_TOPICS, LIFESPAN, NUM_INSTANCES, NUM_ITERATIONS,
    TAKE_READ, TIME_FILTER, PERIODIC_ANNOUNCEMENT, DATAFRAG_SIZE, CFT, SIZE_MODULO,
    EXPECTS_INLINE_QOS
};

static bool parse(int argc, char** argv, Options& o)
{
    static const struct option longs[] = {
        {"help", no_argument, nullptr, 'h'},
        {"write-period", required_argument, nullptr, WRITE_PERIOD},
        {"read-period", required_argument, nullptr, READ_PERIOD},
        {"final-instance-state", required_argument, nullptr, FINAL_STATE},
        {"access-scope", required_argument, nullptr, ACCESS_SCOPE},
        {"coherent", no_argument, nullptr, COHERENT},
        {"ordered", no_argument, nullptr, ORDERED},
        {"coherent-sample-count", required_argument, nullptr, COHERENT_COUNT},
        {"additional-payload-size", required_argument, nullptr, PAYLOAD_SIZE},
        {"num-topics", required_argument, nullptr, NUM_TOPICS},
        {"lifespan", required_argument, nullptr, LIFESPAN},
        {"num-instances", required_argument, nullptr, NUM_INSTANCES},
        {"num-iterations", required_argument, nullptr, NUM_ITERATIONS},
        {"take-read", no_argument, nullptr, TAKE_READ},
        {"time-filter", required_argument, nullptr, TIME_FILTER},
        {"periodic-announcement", required_argument, nullptr, PERIODIC_ANNOUNCEMENT},
        {"datafrag-size", required_argument, nullptr, DATAFRAG_SIZE},
        {"cft", required_argument, nullptr, CFT},
        {"size-modulo", required_argument, nullptr, SIZE_MODULO},
        {"expects-inline-qos", no_argument, nullptr, EXPECTS_INLINE_QOS},
        {nullptr, 0, nullptr, 0}
    };
    std::vector<std::string> errors;
    std::string err;
    int c;
    opterr = 0;  // we print getopt's errors ourselves, on stdout like the others
    while ((c = getopt_long(argc, argv, "hPSbrRwc:d:D:f:k:p:s:x:t:v:z:", longs, nullptr)) != -1)
    {
        switch (c)
        {
            case 'h': fputs(USAGE, stdout); exit(0);
            case 'v':
                if (optarg[0] == 'd')
                {
                    debug_enabled = true;
                }
                else if (optarg[0] != 'e')
                {
                    errors.push_back(std::string("unrecognized value for verbosity ") + optarg[0]);
                }
                break;
            case 'P': o.publish = true; break;
            case 'S': o.subscribe = true; break;
            case 'b': o.reliable = false; break;
            case 'r': o.reliable = true; break;
            case 'R': o.use_read = true; break;
            case 'w': o.print_writer_samples = true; break;
            case 'c': o.color = optarg; o.has_color = true; break;
            case 'd': o.domain = number("domain_id", optarg, 0, 0, errors); break;
            case 'D':
                if (optarg[0] == 'v' || optarg[0] == 'l' || optarg[0] == 't' || optarg[0] == 'p')
                {
                    o.durability = optarg[0];
                }
                else
                {
                    errors.push_back(std::string("unrecognized value for durability ") + optarg[0]);
                }
                break;
            case 'f': o.deadline_ms = number("deadline_interval", optarg, 0, 0, errors); break;
            case 'k': o.history_depth = number("history_depth", optarg, 0, -1, errors); break;
            case 'p': o.partition = optarg; o.has_partition = true; break;
            case 's': o.ownership_strength = number("ownership_strength", optarg, -1, -1, errors); break;
            case 'x':
                if (optarg[0] == '1' || optarg[0] == '2')
                {
                    o.representation = optarg[0] - '0';
                }
                else
                {
                    errors.push_back(std::string("unrecognized value for data representation ") + optarg[0]);
                }
                break;
            case 't': o.topic = optarg; break;
            case 'z': o.shapesize = number("shapesize", optarg, 0, 20, errors); break;
            case WRITE_PERIOD: o.write_period_ms = number("write-period", optarg, 0, 0, errors); break;
            case READ_PERIOD: o.read_period_ms = number("read-period", optarg, 0, 0, errors); break;
            case TIME_FILTER: o.time_filter_ms = number("timebasedfilter_interval", optarg, 0, 0, errors); break;
            case LIFESPAN: o.lifespan_ms = number("lifespan", optarg, 0, 0, errors); break;
            case NUM_ITERATIONS: o.num_iterations = number("num-iterations", optarg, 1, 0, errors); break;
            case NUM_INSTANCES: o.num_instances = number("num-instances", optarg, 1, 1, errors); break;
            case NUM_TOPICS: o.num_topics = number("num-topics", optarg, 1, 1, errors); break;
            case FINAL_STATE:
                if (optarg[0] == 'u' || optarg[0] == 'd')
                {
                    o.final_state = optarg[0];
                }
                else
                {
                    errors.push_back(std::string("unrecognized value for final-instance-state ") + optarg[0]);
                }
                break;
            case ACCESS_SCOPE:
                if (optarg[0] != 'i' && optarg[0] != 't' && optarg[0] != 'g')
                {
                    errors.push_back(std::string("unrecognized value for coherent-sets ") + optarg[0]);
                }
                break;
            case COHERENT: o.coherent = true; break;
            case ORDERED: o.ordered = true; break;
            case COHERENT_COUNT: number("coherent-sample-count", optarg, 2, 0, errors); break;
            case PAYLOAD_SIZE:
                o.additional_payload_size = number("additional-payload-size", optarg, 1, 0, errors);
                break;
            case TAKE_READ: o.take_read_next_instance = false; break;
            case PERIODIC_ANNOUNCEMENT:
                o.periodic_announcement_ms = number("periodic-announcement", optarg, 0, 0, errors);
                break;
            case DATAFRAG_SIZE: o.datafrag_size = number("datafrag-size", optarg, 0, 0, errors); break;
            case CFT: o.has_cft = true; o.cft = optarg; break;
            case SIZE_MODULO: o.size_modulo = number("size-modulo", optarg, 1, 0, errors); break;
            case EXPECTS_INLINE_QOS: o.expects_inline_qos = true; break;
            default:
                errors.push_back(std::string("option not recognized or missing its value: ") +
                        (optopt > 0 && optopt < 256 ? std::string("-") + static_cast<char>(optopt)
                                                    : std::string(argv[optind - 1])));
                break;
        }
    }

    if (o.topic.empty())
    {
        errors.push_back("please specify topic name [-t]");
    }
    if (!o.publish && !o.subscribe)
    {
        errors.push_back("please specify publish [-P] or subscribe [-S]");
    }
    if (o.publish && o.subscribe)
    {
        errors.push_back("please specify only one of: publish [-P] or subscribe [-S]");
    }
    if (o.publish && !o.has_color)
    {
        o.color = "BLUE";
        o.has_color = true;
        out("warning: color was not specified, defaulting to \"BLUE\"");
    }
    if (o.subscribe && o.has_color && o.has_cft)
    {
        errors.push_back("error: cannot specify both --cft and -c for subscriber applications");
    }
    for (const auto& e : errors)
    {
        out("%s", e.c_str());
    }
    return errors.empty();
}

// --------------------------------------------------------------------- QoS ----

static Duration_t ms(int n)
{
    return Duration_t(n / 1000, static_cast<uint32_t>((n % 1000) * 1000000));
}

static DurabilityQosPolicyKind durability_kind(char d)
{
    switch (d)
    {
        case 'l': return TRANSIENT_LOCAL_DURABILITY_QOS;
        case 't': return TRANSIENT_DURABILITY_QOS;
        case 'p': return PERSISTENT_DURABILITY_QOS;
        default: return VOLATILE_DURABILITY_QOS;
    }
}

// The QoS both endpoint kinds have; Q is DataWriterQos or DataReaderQos.
template<typename Q>
static void common_qos(const Options& o, Q& q)
{
    if (o.reliable)
    {
        q.reliability().kind = RELIABLE_RELIABILITY_QOS;
        q.reliability().max_blocking_time = ms(100);
    }
    else
    {
        q.reliability().kind = BEST_EFFORT_RELIABILITY_QOS;
    }
    q.durability().kind = durability_kind(o.durability);
    if (o.history_depth > 0)
    {
        q.history().kind = KEEP_LAST_HISTORY_QOS;
        q.history().depth = o.history_depth;
    }
    else if (o.history_depth == 0)
    {
        q.history().kind = KEEP_ALL_HISTORY_QOS;
    }
    if (o.deadline_ms > 0)
    {
        q.deadline().period = ms(o.deadline_ms);
    }
    q.ownership().kind = o.ownership_strength >= 0 ? EXCLUSIVE_OWNERSHIP_QOS : SHARED_OWNERSHIP_QOS;
    // Data sharing would bypass the network between two Fast DDS processes on this host;
    // this peer exists to show the wire.
    q.data_sharing().off();
}

static DataWriterQos writer_qos(const Options& o)
{
    DataWriterQos q = DATAWRITER_QOS_DEFAULT;
    common_qos(o, q);
    if (o.ownership_strength >= 0)
    {
        q.ownership_strength().value = static_cast<uint32_t>(o.ownership_strength);
    }
    if (o.lifespan_ms > 0)
    {
        q.lifespan().duration = ms(o.lifespan_ms);
    }
    // -x 1 leaves the policy empty: what every Fast DDS 2.9.1 application announces (nothing)
    // and writes (XCDR1). -x 2 only announces XCDR2: the generated type support has no
    // XCDR2 serializer in 2.9.1, so the data stay XCDR1 (encapsulation CDR_LE).
    if (o.representation == 2)
    {
        q.representation().m_value.push_back(XCDR2_DATA_REPRESENTATION);
    }
    q.writer_data_lifecycle().autodispose_unregistered_instances = o.final_state != 'u';
    return q;
}

static DataReaderQos reader_qos(const Options& o)
{
    DataReaderQos q = DATAREADER_QOS_DEFAULT;
    common_qos(o, q);
    if (o.time_filter_ms > 0)
    {
        // Announced, but Fast DDS 2.9.1 does not filter by time.
        q.time_based_filter().minimum_separation = ms(o.time_filter_ms);
    }
    // A reader's accepted representations live in type_consistency() in 2.9.1. Empty (-x 1)
    // accepts XCDR1 writers only; -x 2 accepts XCDR1 and XCDR2 writers, but the generated
    // type support can only decode XCDR1.
    if (o.representation == 2)
    {
        q.type_consistency().representation.m_value.push_back(XCDR2_DATA_REPRESENTATION);
    }
    q.expects_inline_qos(o.expects_inline_qos);
    return q;
}

// ---------------------------------------------------------------------- run ----

static volatile sig_atomic_t stopped = 0;

static void on_signal(int)
{
    stopped = 1;
}

// Sleeps `n` ms in short steps, returning early once stopped.
static void sleep_ms(int n)
{
    auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(n);
    while (!stopped && std::chrono::steady_clock::now() < end)
    {
        std::this_thread::sleep_for(std::chrono::milliseconds(std::min(n, 20)));
    }
}

struct Endpoints
{
    std::vector<std::unique_ptr<ShapeListener>> listeners;  // outlive their entities
    std::vector<DataWriter*> writers;
    std::vector<DataReader*> readers;
};

static int run_publisher(DomainParticipant* dp, const std::vector<Topic*>& topics, const Options& o, Endpoints& ep)
{
    if (o.coherent || o.ordered)
    {
        out("    Presentation Access Scope = not supported");
        return 2;
    }
    if (o.datafrag_size > 0)
    {
        out("    Data Fragmentation Size = not supported");
        return 2;
    }
    PublisherQos pub_qos = PUBLISHER_QOS_DEFAULT;
    if (o.has_partition)
    {
        pub_qos.partition().push_back(o.partition.c_str());
    }
    Publisher* publisher = dp->create_publisher(pub_qos);
    if (publisher == nullptr)
    {
        out("failed to create publisher");
        return 2;
    }
    DataWriterQos qos = writer_qos(o);
    for (Topic* t : topics)
    {
        out("Create writer for topic: %s color: %s", t->get_name().c_str(), o.color.c_str());
        ep.listeners.emplace_back(new ShapeListener(t->get_name()));
        DataWriter* w = publisher->create_datawriter(t, qos, ep.listeners.back().get());
        if (w == nullptr)
        {
            out("failed to create datawriter[%s]", t->get_name().c_str());
            return 2;
        }
        ep.writers.push_back(w);
    }

    const int width = 240, height = 270;
    ShapeType shape;
    shape.x(rand() % width);
    shape.y(rand() % height);
    shape.shapesize(o.shapesize);
    shape.additional_payload_size().assign(static_cast<size_t>(o.additional_payload_size), 255);
    int xvel = (rand() % 5 + 1) * (rand() % 2 ? 1 : -1);
    int yvel = (rand() % 5 + 1) * (rand() % 2 ? 1 : -1);
    std::vector<std::string> colors;
    for (int j = 0; j < o.num_instances; ++j)
    {
        colors.push_back(o.color + (j > 0 ? std::to_string(j) : std::string()));
    }

    int n = 0;
    while (!stopped)
    {
        int x = shape.x() + xvel, y = shape.y() + yvel;
        if (x < 0) { x = 0; xvel = -xvel; }
        if (x > width) { x = width; xvel = -xvel; }
        if (y < 0) { y = 0; yvel = -yvel; }
        if (y > height) { y = height; yvel = -yvel; }
        shape.x(x);
        shape.y(y);
        if (o.shapesize == 0)
        {
            shape.shapesize(o.size_modulo > 0 ? shape.shapesize() % o.size_modulo + 1 : shape.shapesize() + 1);
        }
        for (DataWriter* w : ep.writers)
        {
            for (const auto& c : colors)
            {
                shape.color(c);
                w->write(&shape);
                if (o.print_writer_samples)
                {
                    print_sample(w->get_topic()->get_name(), shape);
                }
            }
        }
        sleep_ms(o.write_period_ms);
        ++n;
        if (o.num_iterations && n >= o.num_iterations)
        {
            break;
        }
    }

    // --final-instance-state: how the suite's FinalInstanceState tests end each instance.
    for (DataWriter* w : ep.writers)
    {
        for (const auto& c : colors)
        {
            shape.color(c);
            if (o.final_state == 'u')
            {
                w->unregister_instance(&shape, HANDLE_NIL);
            }
            else if (o.final_state == 'd')
            {
                w->dispose(&shape, HANDLE_NIL);
            }
        }
    }
    for (DataWriter* w : ep.writers)
    {
        w->wait_for_acknowledgments(Duration_t(1, 0));
    }
    return 0;
}

// Prints what one read/take returned. `colors` remembers each instance's color from its
// valid samples: Fast DDS 2.9.1 does not implement DataReader::get_key_value, and an
// invalid sample (dispose, unregister) carries no data.
static void print_samples(const std::string& topic, const Options& o, LoanableSequence<ShapeType>& data,
        SampleInfoSeq& infos, std::map<InstanceHandle_t, std::string>& colors)
{
    for (LoanableCollection::size_type i = 0; i < infos.length(); ++i)
    {
        const SampleInfo& info = infos[i];
        std::string color;
        if (info.valid_data)
        {
            color = data[i].color().to_string();
            colors[info.instance_handle] = color;
        }
        else
        {
            auto it = colors.find(info.instance_handle);
            if (it == colors.end())
            {
                if (debug_enabled)
                {
                    // E.g. a dispose whose instance handle Fast DDS took from a serialized key.
                    std::string hex;
                    char b[3];
                    for (int j = 0; j < 16; ++j)
                    {
                        snprintf(b, sizeof b, "%02x", static_cast<unsigned>(info.instance_handle.value[j]));
                        hex += b;
                    }
                    out("invalid sample (instance state %d) for instance %s, never seen with data",
                            static_cast<int>(info.instance_state), hex.c_str());
                }
                continue;
            }
            color = it->second;
        }
        if (o.has_color && color != o.color)
        {
            continue;  // -c: only this color (as shapes_cyclone.py, no content filter)
        }
        if (info.valid_data)
        {
            print_sample(topic, data[i]);
        }
        if (info.instance_state == NOT_ALIVE_NO_WRITERS_INSTANCE_STATE)
        {
            out("%-10s %-10s NOT_ALIVE_NO_WRITERS_INSTANCE_STATE", topic.c_str(), color.c_str());
        }
        else if (info.instance_state == NOT_ALIVE_DISPOSED_INSTANCE_STATE)
        {
            out("%-10s %-10s NOT_ALIVE_DISPOSED_INSTANCE_STATE", topic.c_str(), color.c_str());
        }
    }
}

static int run_subscriber(DomainParticipant* dp, const std::vector<Topic*>& topics, const Options& o, Endpoints& ep)
{
    if (o.coherent || o.ordered)
    {
        out("    Presentation Access Scope = not supported");
        return 2;
    }
    SubscriberQos sub_qos = SUBSCRIBER_QOS_DEFAULT;
    if (o.has_partition)
    {
        sub_qos.partition().push_back(o.partition.c_str());
    }
    Subscriber* subscriber = dp->create_subscriber(sub_qos);
    if (subscriber == nullptr)
    {
        out("failed to create subscriber");
        return 2;
    }
    DataReaderQos qos = reader_qos(o);
    for (Topic* t : topics)
    {
        out("Create reader for topic: %s%s", t->get_name().c_str(),
                o.has_color || o.has_cft ? "_filtered" : "");
        TopicDescription* source = t;
        if (o.has_cft)
        {
            // --cft: a Fast DDS content-filtered topic (its default DDSSQL filter class),
            // which Fast DDS announces to writers and applies itself.
            source = dp->create_contentfilteredtopic(t->get_name() + "_filtered", t, o.cft, {});
            if (source == nullptr)
            {
                out("failed to create content filtered topic");
                return 2;
            }
        }
        ep.listeners.emplace_back(new ShapeListener(t->get_name()));
        DataReader* r = subscriber->create_datareader(source, qos, ep.listeners.back().get());
        if (r == nullptr)
        {
            out("failed to create datareader[%s]", t->get_name().c_str());
            return 2;
        }
        ep.readers.push_back(r);
    }

    std::vector<std::map<InstanceHandle_t, std::string>> colors(ep.readers.size());
    int n = 0;
    while (!stopped)
    {
        for (size_t k = 0; k < ep.readers.size(); ++k)
        {
            DataReader* r = ep.readers[k];
            const std::string topic = r->get_topicdescription()->get_name();
            LoanableSequence<ShapeType> data;
            SampleInfoSeq infos;
            if (!o.take_read_next_instance)
            {
                // --take-read: one plain read/take, in whatever order Fast DDS returns.
                if ((o.use_read ? r->read(data, infos) : r->take(data, infos)) == ReturnCode_t::RETCODE_OK)
                {
                    print_samples(topic, o, data, infos, colors[k]);
                    r->return_loan(data, infos);
                }
                continue;
            }
            // Default: instance by instance (read/take_next_instance), as the suite's app does.
            InstanceHandle_t previous = HANDLE_NIL;
            while (true)
            {
                ReturnCode_t rc = o.use_read ? r->read_next_instance(data, infos, LENGTH_UNLIMITED, previous)
                        : r->take_next_instance(data, infos, LENGTH_UNLIMITED, previous);
                if (rc != ReturnCode_t::RETCODE_OK)
                {
                    break;
                }
                if (infos.length() > 0)
                {
                    previous = infos[0].instance_handle;
                }
                print_samples(topic, o, data, infos, colors[k]);
                r->return_loan(data, infos);
                if (previous == HANDLE_NIL)
                {
                    break;
                }
            }
        }
        ++n;
        if (o.num_iterations && n >= o.num_iterations)
        {
            break;
        }
        sleep_ms(o.read_period_ms);
    }
    return 0;
}

static DomainParticipant* create_participant(const Options& o)
{
    DomainParticipantQos pqos = PARTICIPANT_QOS_DEFAULT;
    pqos.name("fastdds_shape");
    // Loopback only: one UDPv4 transport whitelisted to 127.0.0.1, no builtin UDP/SHM
    // transports. SPDP keeps its default multicast locator 239.255.0.1.
    pqos.transport().use_builtin_transports = false;
    auto udp = std::make_shared<eprosima::fastdds::rtps::UDPv4TransportDescriptor>();
    udp->interfaceWhiteList.push_back("127.0.0.1");
    pqos.transport().user_transports.push_back(udp);
    if (o.periodic_announcement_ms > 0)
    {
        pqos.wire_protocol().builtin.discovery_config.leaseDuration_announcementperiod =
                ms(o.periodic_announcement_ms);
    }
    return DomainParticipantFactory::get_instance()->create_participant(
        static_cast<DomainId_t>(o.domain), pqos);
}

int main(int argc, char** argv)
{
    Options o;
    if (!parse(argc, argv, o))
    {
        return 1;
    }
    if (debug_enabled)
    {
        Log::SetVerbosity(Log::Info);  // Fast DDS's own warnings (and infos, if compiled in), on stderr
    }
    srand(static_cast<unsigned>(time(nullptr)) ^ static_cast<unsigned>(getpid()));
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);

    DomainParticipant* dp = create_participant(o);
    if (dp == nullptr)
    {
        out("failed to create participant (domain %d)", o.domain);
        return 2;
    }
    // The TypeObject is registered for Fast DDS's own use only (its DDSSQL content filter
    // needs it, for --cft); it is not announced, so discovery is what it was without it.
    registerShapeTypeTypes();
    TypeSupport type(new ShapeTypePubSubType());  // registers as "ShapeType"
    type->auto_fill_type_object(false);
    type->auto_fill_type_information(false);
    type.register_type(dp);

    int code = 0;
    std::vector<Topic*> topics;
    for (int i = 0; i < o.num_topics && code == 0; ++i)
    {
        std::string name = o.topic + (i > 0 ? std::to_string(i) : std::string());
        out("Create topic: %s", name.c_str());
        Topic* t = dp->create_topic(name, type.get_type_name(), TOPIC_QOS_DEFAULT);
        if (t == nullptr)
        {
            out("failed to create topic %s", name.c_str());
            code = 2;
        }
        topics.push_back(t);
    }
    Endpoints ep;
    if (code == 0)
    {
        code = o.publish ? run_publisher(dp, topics, o, ep) : run_subscriber(dp, topics, o, ep);
    }
    if (code == 0)
    {
        out("Done.");
    }
    // No listener callback may run while (or after) the entities go.
    for (DataWriter* w : ep.writers)
    {
        w->set_listener(nullptr);
    }
    for (DataReader* r : ep.readers)
    {
        r->set_listener(nullptr);
    }
    dp->delete_contained_entities();
    DomainParticipantFactory::get_instance()->delete_participant(dp);
    return code;
}
