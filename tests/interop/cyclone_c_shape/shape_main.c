/*
 * Cyclone DDS (C, 0.10.x) shape application: the OMG DDS interoperability suite's
 * `shape_main`, written for FerroDDS's tests as a real Cyclone C peer.
 *
 * It mirrors tests/interop/shapes_cyclone.py (the Python / Cyclone 11 one): same options
 * (getopt_long, GNU argument permutation), same output lines, same behaviour:
 *
 *   Create topic: T / Create writer for topic: T color: C / Create reader for topic: T
 *   (T_filtered with -c), the listener lines, one "%-10s %-10s %03d %03d [%d]" line per
 *   sample (" {N}" appended, N the last byte of additional_payload_size, when non-empty),
 *   "T C NOT_ALIVE_DISPOSED_INSTANCE_STATE" / "T C NOT_ALIVE_NO_WRITERS_INSTANCE_STATE",
 *   and "Done." at the end.
 *
 * A subscriber's -c is applied by the application (the reader takes every color and only
 * the asked-for one is printed), as in shapes_cyclone.py. --cft, --coherent, --ordered and
 * --datafrag-size are refused with "not supported" (exit 2).
 *
 * Differences forced by Cyclone DDS 0.10.x:
 *  - without -x the data representation QoS is left to Cyclone, which for this appendable
 *    type means XCDR2 (shapes_cyclone.py asks for XCDR1 by default);
 *  - -x 1 is refused by Cyclone 0.10.x for an appendable type: the application prints
 *    "Data Representation XCDR1 = not supported" and exits 2;
 *  - --no-type-info (not a suite option) leaves the XTypes TypeInformation out of discovery,
 *    which a 0.10.x peer needs to talk to Cyclone >= 0.11 (e.g. shapes_cyclone.py).
 *
 * Exit status: 0 after "Done.", 1 bad options, 2 entities not created / not supported.
 *
 * Unless CYCLONEDDS_URI is set and non-empty, Cyclone is pinned to loopback with SPDP over
 * multicast (the same configuration shapes_cyclone.py uses).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dds/dds.h"
#include "dds/version.h"
#include "ShapeType.h"

#define DEFAULT_URI                                                         \
  "<CycloneDDS><Domain id=\"any\"><General><Interfaces>"                    \
  "<NetworkInterface name=\"lo\" multicast=\"true\"/></Interfaces>"         \
  "<AllowMulticast>spdp</AllowMulticast></General></Domain></CycloneDDS>"

#define TYPE_NAME "ShapeType"
#define MAX_TOPICS 64

/* ------------------------------------------------------------------ output ---- */

static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

static volatile sig_atomic_t stopped = 0; /* set by SIGINT / SIGTERM, or a closed stdout */

/* One line on stdout, flushed (listeners print from Cyclone's threads). */
static void vout (const char *fmt, va_list ap)
{
  pthread_mutex_lock (&print_lock);
  vprintf (fmt, ap);
  putchar ('\n');
  if (fflush (stdout) != 0 && errno == EPIPE)
    stopped = 1;
  pthread_mutex_unlock (&print_lock);
}

static void out (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  vout (fmt, ap);
  va_end (ap);
}

static void print_sample (const char *topic, const ShapeType *s)
{
  const dds_sequence_uint8 *extra = &s->additional_payload_size;
  if (extra->_length > 0)
    out ("%-10s %-10s %03d %03d [%d] {%u}", topic, s->color, s->x, s->y, s->shapesize,
         (unsigned) extra->_buffer[extra->_length - 1]);
  else
    out ("%-10s %-10s %03d %03d [%d]", topic, s->color, s->x, s->y, s->shapesize);
}

/* ---------------------------------------------------------------- listeners ---- */

/* Cyclone's QosPolicyId numbering (dds_public_qosdefs.h). */
static const char *policy_name (uint32_t id)
{
  static const char *names[] = {
    "Unknown", "USERDATA", "DURABILITY", "PRESENTATION", "DEADLINE", "LATENCYBUDGET",
    "OWNERSHIP", "OWNERSHIPSTRENGTH", "LIVELINESS", "TIMEBASEDFILTER", "PARTITION",
    "RELIABILITY", "DESTINATIONORDER", "HISTORY", "RESOURCELIMITS", "ENTITYFACTORY",
    "WRITERDATALIFECYCLE", "READERDATALIFECYCLE", "TOPICDATA", "GROUPDATA",
    "TRANSPORTPRIORITY", "LIFESPAN", "DURABILITYSERVICE", "PROPERTY",
    "TYPE_CONSISTENCY_ENFORCEMENT", "DATAREPRESENTATION"
  };
  return id < sizeof (names) / sizeof (names[0]) ? names[id] : "Unknown";
}

/* The listener argument is the topic name. */
#define HEAD "%s() topic: '%s'  type: '" TYPE_NAME "' : "

static void on_publication_matched (dds_entity_t w, const dds_publication_matched_status_t st, void *arg)
{
  (void) w;
  out (HEAD "matched readers %d (change = %d)", "on_publication_matched", (const char *) arg,
       (int) st.current_count, (int) st.current_count_change);
}

static void on_subscription_matched (dds_entity_t r, const dds_subscription_matched_status_t st, void *arg)
{
  (void) r;
  out (HEAD "matched writers %d (change = %d)", "on_subscription_matched", (const char *) arg,
       (int) st.current_count, (int) st.current_count_change);
}

static void on_offered_incompatible_qos (dds_entity_t w, const dds_offered_incompatible_qos_status_t st, void *arg)
{
  (void) w;
  out (HEAD "%d (%s)", "on_offered_incompatible_qos", (const char *) arg,
       (int) st.last_policy_id, policy_name (st.last_policy_id));
}

static void on_requested_incompatible_qos (dds_entity_t r, const dds_requested_incompatible_qos_status_t st, void *arg)
{
  (void) r;
  out (HEAD "%d (%s)", "on_requested_incompatible_qos", (const char *) arg,
       (int) st.last_policy_id, policy_name (st.last_policy_id));
}

static void on_offered_deadline_missed (dds_entity_t w, const dds_offered_deadline_missed_status_t st, void *arg)
{
  (void) w;
  out (HEAD "(total = %d, change = %d)", "on_offered_deadline_missed", (const char *) arg,
       (int) st.total_count, (int) st.total_count_change);
}

static void on_requested_deadline_missed (dds_entity_t r, const dds_requested_deadline_missed_status_t st, void *arg)
{
  (void) r;
  out (HEAD "(total = %d, change = %d)", "on_requested_deadline_missed", (const char *) arg,
       (int) st.total_count, (int) st.total_count_change);
}

static dds_listener_t *make_listener (const char *topic_name, bool writer)
{
  dds_listener_t *l = dds_create_listener ((void *) topic_name);
  if (writer)
  {
    dds_lset_publication_matched (l, on_publication_matched);
    dds_lset_offered_incompatible_qos (l, on_offered_incompatible_qos);
    dds_lset_offered_deadline_missed (l, on_offered_deadline_missed);
  }
  else
  {
    dds_lset_subscription_matched (l, on_subscription_matched);
    dds_lset_requested_incompatible_qos (l, on_requested_incompatible_qos);
    dds_lset_requested_deadline_missed (l, on_requested_deadline_missed);
  }
  return l;
}

/* ------------------------------------------------------------------ options ---- */

struct options {
  bool publish, subscribe, reliable, print_writer_samples, use_read;
  bool coherent, ordered, take_read_next_instance;
  int domain;
  char durability;          /* v l t p */
  int representation;       /* 0 = Cyclone's default, 1 = XCDR1, 2 = XCDR2 */
  int history_depth;        /* -1 default, 0 keep all, > 0 keep last */
  int ownership_strength;   /* -1 shared */
  const char *topic, *color, *partition, *cft;
  int time_filter_ms, deadline_ms, lifespan_ms, shapesize;
  int write_period_ms, read_period_ms, num_iterations, num_instances, num_topics;
  char final_state;         /* 0, 'u' or 'd' */
  bool no_type_info;        /* not a suite option: see --no-type-info */
  int additional_payload_size, datafrag_size, size_modulo;
};

static int n_errors;

static void error (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  vout (fmt, ap);
  va_end (ap);
  n_errors++;
}

/* An integer option value >= minimum; on error (reported) returns fallback. */
static int number (const char *name, const char *text, int minimum, int fallback)
{
  char *end;
  errno = 0;
  long v = strtol (text, &end, 10);
  if (end == text || *end != '\0' || errno != 0 || v < INT_MIN || v > INT_MAX)
  {
    error ("unrecognized value for %s %s", name, text);
    return fallback;
  }
  if (v < minimum)
  {
    error ("incorrect value for %s %ld", name, v);
    return fallback;
  }
  return (int) v;
}

static void usage (void)
{
  puts ("Cyclone DDS (C) shape application (OMG DDS interoperability suite's shape_main)\n"
        "usage: cyclone_c_shape (-P | -S) -t TOPIC [options]\n"
        "  -d DOMAIN, -c COLOR, -p PARTITION, -b (best effort) | -r (reliable),\n"
        "  -D v|l|t|p (durability), -k DEPTH (0 = keep all), -s STRENGTH (exclusive ownership),\n"
        "  -f DEADLINE_MS, -x 1|2 (XCDR1/XCDR2), -z SHAPESIZE, -w (print written samples),\n"
        "  -R (read instead of take), -v e|d,\n"
        "  --write-period MS, --read-period MS, --num-iterations N, --num-instances N,\n"
        "  --num-topics N, --final-instance-state u|d, --lifespan MS, --time-filter MS,\n"
        "  --additional-payload-size N, --size-modulo N, --take-read,\n"
        "  --access-scope i|t|g, --coherent-sample-count N, --periodic-announcement MS\n"
        "  --no-type-info: no XTypes TypeInformation in discovery (needed to talk to Cyclone >= 0.11)\n"
        "  not supported: --coherent, --ordered, --cft, --datafrag-size");
}

enum {
  O_WRITE_PERIOD = 256, O_READ_PERIOD, O_FINAL_STATE, O_ACCESS_SCOPE, O_COHERENT, O_ORDERED,
  O_COHERENT_COUNT, O_EXTRA_PAYLOAD, O_NUM_TOPICS, O_LIFESPAN, O_NUM_INSTANCES,
  O_NUM_ITERATIONS, O_TAKE_READ, O_TIME_FILTER, O_PERIODIC, O_DATAFRAG, O_CFT, O_SIZE_MODULO,
  O_NO_TYPE_INFO
};

static const struct option long_options[] = {
  { "help", no_argument, NULL, 'h' },
  { "write-period", required_argument, NULL, O_WRITE_PERIOD },
  { "read-period", required_argument, NULL, O_READ_PERIOD },
  { "final-instance-state", required_argument, NULL, O_FINAL_STATE },
  { "access-scope", required_argument, NULL, O_ACCESS_SCOPE },
  { "coherent", no_argument, NULL, O_COHERENT },
  { "ordered", no_argument, NULL, O_ORDERED },
  { "coherent-sample-count", required_argument, NULL, O_COHERENT_COUNT },
  { "additional-payload-size", required_argument, NULL, O_EXTRA_PAYLOAD },
  { "num-topics", required_argument, NULL, O_NUM_TOPICS },
  { "lifespan", required_argument, NULL, O_LIFESPAN },
  { "num-instances", required_argument, NULL, O_NUM_INSTANCES },
  { "num-iterations", required_argument, NULL, O_NUM_ITERATIONS },
  { "take-read", no_argument, NULL, O_TAKE_READ },
  { "time-filter", required_argument, NULL, O_TIME_FILTER },
  { "periodic-announcement", required_argument, NULL, O_PERIODIC },
  { "datafrag-size", required_argument, NULL, O_DATAFRAG },
  { "cft", required_argument, NULL, O_CFT },
  { "size-modulo", required_argument, NULL, O_SIZE_MODULO },
  { "no-type-info", no_argument, NULL, O_NO_TYPE_INFO },
  { NULL, 0, NULL, 0 }
};

/* Returns true if the options are usable; errors have been printed otherwise. */
static bool parse (int argc, char **argv, struct options *o)
{
  memset (o, 0, sizeof (*o));
  o->reliable = true;
  o->durability = 'v';
  o->history_depth = -1;
  o->ownership_strength = -1;
  o->shapesize = 20;
  o->write_period_ms = 33;
  o->read_period_ms = 100;
  o->num_instances = 1;
  o->num_topics = 1;
  o->take_read_next_instance = true;

  opterr = 0;
  int c, idx;
  while ((c = getopt_long (argc, argv, ":hPSbrRwc:d:D:f:k:p:s:x:t:v:z:", long_options, &idx)) != -1)
  {
    switch (c)
    {
      case 'h': usage (); exit (0);
      case 'v':
        if (optarg[0] != 'd' && optarg[0] != 'e')
          error ("unrecognized value for verbosity %c", optarg[0]);
        break;
      case 'P': o->publish = true; break;
      case 'S': o->subscribe = true; break;
      case 'b': o->reliable = false; break;
      case 'r': o->reliable = true; break;
      case 'R': o->use_read = true; break;
      case 'w': o->print_writer_samples = true; break;
      case 'c': o->color = optarg; break;
      case 'd': o->domain = number ("domain_id", optarg, 0, 0); break;
      case 'D':
        if (optarg[0] && strchr ("vltp", optarg[0]))
          o->durability = optarg[0];
        else
          error ("unrecognized value for durability %c", optarg[0]);
        break;
      case 'f': o->deadline_ms = number ("deadline_interval", optarg, 0, 0); break;
      case 'k': o->history_depth = number ("history_depth", optarg, 0, -1); break;
      case 'p': o->partition = optarg; break;
      case 's': o->ownership_strength = number ("ownership_strength", optarg, -1, -1); break;
      case 'x':
        if (optarg[0] == '1' || optarg[0] == '2')
          o->representation = optarg[0] - '0';
        else
          error ("unrecognized value for data representation %c", optarg[0]);
        break;
      case 't': o->topic = optarg; break;
      case 'z': o->shapesize = number ("shapesize", optarg, 0, 20); break;
      case O_WRITE_PERIOD: o->write_period_ms = number ("write-period", optarg, 0, 0); break;
      case O_READ_PERIOD: o->read_period_ms = number ("read-period", optarg, 0, 0); break;
      case O_TIME_FILTER: o->time_filter_ms = number ("timebasedfilter_interval", optarg, 0, 0); break;
      case O_LIFESPAN: o->lifespan_ms = number ("lifespan", optarg, 0, 0); break;
      case O_NUM_ITERATIONS: o->num_iterations = number ("num-iterations", optarg, 1, 0); break;
      case O_NUM_INSTANCES: o->num_instances = number ("num-instances", optarg, 1, 1); break;
      case O_NUM_TOPICS: o->num_topics = number ("num-topics", optarg, 1, 1); break;
      case O_FINAL_STATE:
        if (optarg[0] == 'u' || optarg[0] == 'd')
          o->final_state = optarg[0];
        else
          error ("unrecognized value for final-instance-state %c", optarg[0]);
        break;
      case O_ACCESS_SCOPE:
        if (!optarg[0] || !strchr ("itg", optarg[0]))
          error ("unrecognized value for coherent-sets %c", optarg[0]);
        break;
      case O_COHERENT: o->coherent = true; break;
      case O_ORDERED: o->ordered = true; break;
      case O_COHERENT_COUNT: (void) number ("coherent-sample-count", optarg, 2, 0); break;
      case O_EXTRA_PAYLOAD: o->additional_payload_size = number ("additional-payload-size", optarg, 1, 0); break;
      case O_TAKE_READ: o->take_read_next_instance = false; break;
      case O_PERIODIC: (void) number ("periodic-announcement", optarg, 0, 0); break;
      case O_DATAFRAG: o->datafrag_size = number ("datafrag-size", optarg, 0, 0); break;
      case O_CFT: o->cft = optarg; break;
      case O_SIZE_MODULO: o->size_modulo = number ("size-modulo", optarg, 1, 0); break;
      case O_NO_TYPE_INFO: o->no_type_info = true; break;
      case ':':
        if (optopt)
          out ("option -%c requires argument", optopt);
        else
          out ("option %s requires argument", argv[optind - 1]);
        return false;
      default:
        if (optopt)
          out ("option -%c not recognized", optopt);
        else
          out ("option %s not recognized", argv[optind - 1]);
        return false;
    }
  }

  if (o->num_topics > MAX_TOPICS)
    error ("incorrect value for num-topics %d", o->num_topics);
  if (o->topic == NULL)
    error ("please specify topic name [-t]");
  if (!o->publish && !o->subscribe)
    error ("please specify publish [-P] or subscribe [-S]");
  if (o->publish && o->subscribe)
    error ("please specify only one of: publish [-P] or subscribe [-S]");
  if (o->publish && o->color == NULL)
  {
    o->color = "BLUE";
    out ("warning: color was not specified, defaulting to \"BLUE\"");
  }
  if (o->subscribe && o->color != NULL && o->cft != NULL)
    error ("error: cannot specify both --cft and -c for subscriber applications");
  return n_errors == 0;
}

/* ---------------------------------------------------------------------- QoS ---- */

static dds_qos_t *endpoint_qos (const struct options *o, bool writer)
{
  dds_qos_t *q = dds_create_qos ();
  if (o->reliable)
    dds_qset_reliability (q, DDS_RELIABILITY_RELIABLE, DDS_MSECS (100));
  else
    dds_qset_reliability (q, DDS_RELIABILITY_BEST_EFFORT, 0);
  switch (o->durability)
  {
    case 'l': dds_qset_durability (q, DDS_DURABILITY_TRANSIENT_LOCAL); break;
    case 't': dds_qset_durability (q, DDS_DURABILITY_TRANSIENT); break;
    case 'p': dds_qset_durability (q, DDS_DURABILITY_PERSISTENT); break;
    default: dds_qset_durability (q, DDS_DURABILITY_VOLATILE); break;
  }
  /* Without -x, Cyclone's default: for this (appendable) type XCDR2 only in 0.10.x. */
  if (o->representation != 0)
  {
    dds_data_representation_id_t rep =
      o->representation == 1 ? DDS_DATA_REPRESENTATION_XCDR1 : DDS_DATA_REPRESENTATION_XCDR2;
    dds_qset_data_representation (q, 1, &rep);
  }
  if (o->history_depth > 0)
    dds_qset_history (q, DDS_HISTORY_KEEP_LAST, o->history_depth);
  else if (o->history_depth == 0)
    dds_qset_history (q, DDS_HISTORY_KEEP_ALL, 0);
  if (o->deadline_ms > 0)
    dds_qset_deadline (q, DDS_MSECS (o->deadline_ms));
  if (o->ownership_strength >= 0)
  {
    dds_qset_ownership (q, DDS_OWNERSHIP_EXCLUSIVE);
    if (writer)
      dds_qset_ownership_strength (q, o->ownership_strength);
  }
  else
    dds_qset_ownership (q, DDS_OWNERSHIP_SHARED);
  if (writer)
  {
    if (o->lifespan_ms > 0)
      dds_qset_lifespan (q, DDS_MSECS (o->lifespan_ms));
    dds_qset_writer_data_lifecycle (q, o->final_state != 'u');
  }
  else if (o->time_filter_ms > 0)
    dds_qset_time_based_filter (q, DDS_MSECS (o->time_filter_ms));
  return q;
}

/* Publisher / subscriber QoS: the partition, if any (NULL otherwise). */
static dds_qos_t *group_qos (const struct options *o)
{
  if (o->partition == NULL)
    return NULL;
  dds_qos_t *q = dds_create_qos ();
  dds_qset_partition1 (q, o->partition);
  return q;
}

/* ---------------------------------------------------------------------- run ---- */

static void stop (int sig)
{
  (void) sig;
  stopped = 1;
}

/* Sleeps ms milliseconds in short steps, returning early once stopped. */
static void sleep_ms (int ms)
{
  struct timespec now, end;
  clock_gettime (CLOCK_MONOTONIC, &end);
  end.tv_sec += ms / 1000;
  end.tv_nsec += (long) (ms % 1000) * 1000000L;
  if (end.tv_nsec >= 1000000000L) { end.tv_sec++; end.tv_nsec -= 1000000000L; }
  while (!stopped)
  {
    clock_gettime (CLOCK_MONOTONIC, &now);
    long left_ns = (end.tv_sec - now.tv_sec) * 1000000000L + (end.tv_nsec - now.tv_nsec);
    if (left_ns <= 0)
      return;
    struct timespec step = { 0, left_ns < 20000000L ? left_ns : 20000000L };
    nanosleep (&step, NULL);
  }
}

static int rand_between (int lo, int hi) /* inclusive */
{
  return lo + rand () % (hi - lo + 1);
}

/* Cyclone DDS 0.10.x refuses XCDR1 for types that are not @final (an appendable type's
   minimum XCDR version is 2), so "-x 1" cannot create the writer / reader. */
#define XCDR1_REFUSED "    Data Representation XCDR1 = not supported (Cyclone DDS " DDS_VERSION \
  " allows only XCDR2 for an appendable type)"

/* Endpoints whose listeners are removed before the participant is deleted. */
static dds_entity_t endpoints[MAX_TOPICS];
static int n_endpoints;
static char topic_names[MAX_TOPICS][256];
static dds_entity_t topics[MAX_TOPICS];

static int run_publisher (dds_entity_t dp, const struct options *o)
{
  if (o->coherent || o->ordered)
  {
    out ("    Presentation Access Scope = not supported");
    return 2;
  }
  if (o->datafrag_size > 0)
  {
    out ("    Data Fragmentation Size = not supported");
    return 2;
  }
  dds_qos_t *gq = group_qos (o);
  dds_entity_t publisher = dds_create_publisher (dp, gq, NULL);
  dds_delete_qos (gq);
  if (publisher < 0)
  {
    out ("failed to create publisher: %s", dds_strretcode (publisher));
    return 2;
  }
  dds_qos_t *q = endpoint_qos (o, true);
  for (int i = 0; i < o->num_topics; i++)
  {
    out ("Create writer for topic: %s color: %s", topic_names[i], o->color);
    dds_listener_t *l = make_listener (topic_names[i], true);
    dds_entity_t w = dds_create_writer (publisher, topics[i], q, l);
    dds_delete_listener (l);
    if (w < 0)
    {
      if (w == DDS_RETCODE_BAD_PARAMETER && o->representation == 1)
        out (XCDR1_REFUSED);
      else
        out ("failed to create datawriter: %s", dds_strretcode (w));
      dds_delete_qos (q);
      return 2;
    }
    endpoints[n_endpoints++] = w;
  }
  dds_delete_qos (q);

  const int width = 240, height = 270;
  size_t extra_len = (size_t) o->additional_payload_size;
  uint8_t *extra_buf = malloc (extra_len > 0 ? extra_len : 1);
  memset (extra_buf, 255, extra_len);
  ShapeType shape;
  memset (&shape, 0, sizeof (shape));
  shape.x = rand_between (0, width - 1);
  shape.y = rand_between (0, height - 1);
  shape.shapesize = o->shapesize;
  shape.additional_payload_size._length = shape.additional_payload_size._maximum = (uint32_t) extra_len;
  shape.additional_payload_size._buffer = extra_buf;
  shape.additional_payload_size._release = false;
  int xvel = rand_between (1, 5) * (rand () % 2 ? 1 : -1);
  int yvel = rand_between (1, 5) * (rand () % 2 ? 1 : -1);

  /* --num-instances N: colors C, C1, C2, ... */
  char (*colors)[129] = malloc ((size_t) o->num_instances * sizeof (*colors));
  for (int j = 0; j < o->num_instances; j++)
  {
    if (j == 0)
      snprintf (colors[j], sizeof (colors[j]), "%s", o->color);
    else
      snprintf (colors[j], sizeof (colors[j]), "%s%d", o->color, j);
  }

  int n = 0;
  while (!stopped)
  {
    shape.x += xvel;
    shape.y += yvel;
    if (shape.x < 0) { shape.x = 0; xvel = -xvel; }
    if (shape.x > width) { shape.x = width; xvel = -xvel; }
    if (shape.y < 0) { shape.y = 0; yvel = -yvel; }
    if (shape.y > height) { shape.y = height; yvel = -yvel; }
    if (o->shapesize == 0)
      shape.shapesize = o->size_modulo > 0 ? shape.shapesize % o->size_modulo + 1 : shape.shapesize + 1;
    for (int i = 0; i < n_endpoints; i++)
    {
      for (int j = 0; j < o->num_instances; j++)
      {
        memcpy (shape.color, colors[j], sizeof (shape.color));
        dds_return_t rc = dds_write (endpoints[i], &shape);
        if (rc < 0)
          fprintf (stderr, "dds_write: %s\n", dds_strretcode (rc));
        if (o->print_writer_samples)
          print_sample (topic_names[i], &shape);
      }
    }
    sleep_ms (o->write_period_ms);
    n++;
    if (o->num_iterations && n >= o->num_iterations)
      break;
  }

  for (int i = 0; i < n_endpoints; i++)
  {
    for (int j = 0; j < o->num_instances; j++)
    {
      memcpy (shape.color, colors[j], sizeof (shape.color));
      dds_return_t rc = DDS_RETCODE_OK;
      if (o->final_state == 'u')
        rc = dds_unregister_instance (endpoints[i], &shape);
      else if (o->final_state == 'd')
        rc = dds_dispose (endpoints[i], &shape);
      if (rc < 0)
        fprintf (stderr, "final instance state: %s\n", dds_strretcode (rc));
    }
  }
  for (int i = 0; i < n_endpoints; i++)
    (void) dds_wait_for_acks (endpoints[i], DDS_SECS (1));
  free (extra_buf);
  free (colors);
  return 0;
}

struct taken {
  const ShapeType *s;
  const dds_sample_info_t *info;
};

static int by_instance (const void *va, const void *vb)
{
  const struct taken *a = va, *b = vb;
  if (a->info->instance_handle != b->info->instance_handle)
    return a->info->instance_handle < b->info->instance_handle ? -1 : 1;
  /* keep the reader's order within an instance (qsort is not stable): infos is in that order */
  return a->info < b->info ? -1 : (a->info > b->info);
}

static void print_taken (const char *topic, const struct options *o, const struct taken *t)
{
  /* Invalid samples (dispose / unregister) carry only the key: color is filled in. */
  const char *color = t->s->color;
  if (o->color != NULL && strcmp (color, o->color) != 0)
    return; /* -c: only this color */
  if (t->info->valid_data)
    print_sample (topic, t->s);
  if (t->info->instance_state == DDS_IST_NOT_ALIVE_NO_WRITERS)
    out ("%-10s %-10s NOT_ALIVE_NO_WRITERS_INSTANCE_STATE", topic, color);
  else if (t->info->instance_state == DDS_IST_NOT_ALIVE_DISPOSED)
    out ("%-10s %-10s NOT_ALIVE_DISPOSED_INSTANCE_STATE", topic, color);
}

/* Prints n samples (sorted by instance unless --take-read). */
static void print_batch (const char *topic, const struct options *o, void **samples,
                         const dds_sample_info_t *infos, int n)
{
  struct taken *all = malloc ((size_t) (n > 0 ? n : 1) * sizeof (*all));
  for (int i = 0; i < n; i++)
  {
    all[i].s = samples[i];
    all[i].info = &infos[i];
  }
  if (o->take_read_next_instance)
    qsort (all, (size_t) n, sizeof (*all), by_instance);
  for (int i = 0; i < n; i++)
    print_taken (topic, o, &all[i]);
  free (all);
}

/* Takes (or, with -R, reads) everything reader r holds and prints it. Cyclone loans the
   samples, at most `cap` at a time: a full batch means there may be more, so the capacity
   grows (a read starts again, a take carries on). */
static void poll_reader (dds_entity_t r, const char *topic, const struct options *o)
{
  static uint32_t cap = 64;
  for (;;)
  {
    void **samples = calloc (cap, sizeof (*samples));
    dds_sample_info_t *infos = calloc (cap, sizeof (*infos));
    dds_return_t n = o->use_read ? dds_read (r, samples, infos, cap, cap)
                                 : dds_take (r, samples, infos, cap, cap);
    bool full = n == (dds_return_t) cap;
    if (n > 0 && !(full && o->use_read))
      print_batch (topic, o, samples, infos, n);
    if (n > 0)
      dds_return_loan (r, samples, n);
    free (samples);
    free (infos);
    if (!full)
      return;
    cap *= 2;
  }
}

static int run_subscriber (dds_entity_t dp, const struct options *o)
{
  if (o->cft != NULL)
  {
    out ("ContentFilterTopic Not Supported");
    return 2;
  }
  if (o->coherent || o->ordered)
  {
    out ("    Presentation Access Scope = not supported");
    return 2;
  }
  dds_qos_t *gq = group_qos (o);
  dds_entity_t subscriber = dds_create_subscriber (dp, gq, NULL);
  dds_delete_qos (gq);
  if (subscriber < 0)
  {
    out ("failed to create subscriber: %s", dds_strretcode (subscriber));
    return 2;
  }
  dds_qos_t *q = endpoint_qos (o, false);
  for (int i = 0; i < o->num_topics; i++)
  {
    if (o->color != NULL)
      out ("Create reader for topic: %s_filtered", topic_names[i]);
    else
      out ("Create reader for topic: %s", topic_names[i]);
    dds_listener_t *l = make_listener (topic_names[i], false);
    dds_entity_t r = dds_create_reader (subscriber, topics[i], q, l);
    dds_delete_listener (l);
    if (r < 0)
    {
      if (r == DDS_RETCODE_BAD_PARAMETER && o->representation == 1)
        out (XCDR1_REFUSED);
      else
        out ("failed to create datareader: %s", dds_strretcode (r));
      dds_delete_qos (q);
      return 2;
    }
    endpoints[n_endpoints++] = r;
  }
  dds_delete_qos (q);

  int n = 0;
  while (!stopped)
  {
    for (int i = 0; i < n_endpoints; i++)
      poll_reader (endpoints[i], topic_names[i], o);
    n++;
    if (o->num_iterations && n >= o->num_iterations)
      break;
    sleep_ms (o->read_period_ms);
  }
  return 0;
}

int main (int argc, char **argv)
{
  struct options o;
  if (!parse (argc, argv, &o))
    return 1;

  struct sigaction sa;
  memset (&sa, 0, sizeof (sa));
  sa.sa_handler = stop;
  sigaction (SIGINT, &sa, NULL);
  sigaction (SIGTERM, &sa, NULL);
  signal (SIGPIPE, SIG_IGN);
  srand ((unsigned) time (NULL) ^ ((unsigned) getpid () << 8));

  const char *uri = getenv ("CYCLONEDDS_URI");
  if (uri == NULL || uri[0] == '\0')
    setenv ("CYCLONEDDS_URI", DEFAULT_URI, 1);

  dds_entity_t dp = dds_create_participant ((dds_domainid_t) o.domain, NULL, NULL);
  if (dp < 0)
  {
    out ("failed to create participant: %s", dds_strretcode (dp));
    return 2;
  }
  /* --no-type-info: the descriptor as `idlc -t` would make it. Cyclone 0.10.x and >= 0.11
     do not accept each other's TypeObjects (0.11 refuses 0.10's, 0.10.2 crashes on 0.11's);
     without TypeInformation both fall back to matching on the type name. */
  const dds_topic_descriptor_t *d = &ShapeType_desc;
  const dds_topic_descriptor_t without_type_info = {
    .m_size = d->m_size, .m_align = d->m_align,
    .m_flagset = d->m_flagset & ~(uint32_t) DDS_TOPIC_XTYPES_METADATA,
    .m_nkeys = d->m_nkeys, .m_typename = d->m_typename, .m_keys = d->m_keys,
    .m_nops = d->m_nops, .m_ops = d->m_ops, .m_meta = d->m_meta,
    .restrict_data_representation = d->restrict_data_representation
  };
  const dds_topic_descriptor_t *desc = o.no_type_info ? &without_type_info : d;
  for (int i = 0; i < o.num_topics; i++)
  {
    if (i == 0)
      snprintf (topic_names[i], sizeof (topic_names[i]), "%s", o.topic);
    else
      snprintf (topic_names[i], sizeof (topic_names[i]), "%s%d", o.topic, i);
    out ("Create topic: %s", topic_names[i]);
    topics[i] = dds_create_topic (dp, desc, topic_names[i], NULL, NULL);
    if (topics[i] < 0)
    {
      out ("failed to create topic: %s", dds_strretcode (topics[i]));
      dds_delete (dp);
      return 2;
    }
  }

  int code = o.publish ? run_publisher (dp, &o) : run_subscriber (dp, &o);
  if (code == 0)
    out ("Done.");
  for (int i = 0; i < n_endpoints; i++)
    (void) dds_set_listener (endpoints[i], NULL);
  dds_delete (dp);
  return code;
}
