/* The C side of the OpenDDSharp matrices (benches/matrix.py): the protocol of
 * benches/python/pingpong.py and crates/ferrodds/examples/pingpong.rs, over
 * crates/ferrodds-c/include/ferrodds.h alone.
 *
 *   pingpong pong DOMAIN [SIZE]
 *   pingpong ping DOMAIN INSTANCES SAMPLES_PER_INSTANCE SIZE
 *   pingpong sub  DOMAIN COUNT
 *   pingpong pub  DOMAIN COUNT SIZE
 *
 * The type is bench::Sample, `@final struct Sample { @key int32 id; uint32 seq;
 * sequence<octet> payload; }`, serialized here by hand (XCDR1, little endian): the ping and
 * the publisher build each sample in one reused buffer, the pong sends back the bytes it
 * took (a C program has no reason to decode an opaque payload it relays). */
#define _POSIX_C_SOURCE 200809L
#include "ferrodds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *IDL =
    "module bench { @final struct Sample { @key int32 id; uint32 seq; sequence<octet> payload; }; };";
static const int64_t SECOND = 1000000000;
#define BATCH 256

static int32_t must(int32_t rc, const char *what) {
    if (rc < 0) {
        fprintf(stderr, "pingpong: %s: %s\n", what, ferrodds_last_error());
        exit(1);
    }
    return rc;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * SECOND + t.tv_nsec;
}

typedef struct {
    ferrodds_entity_t participant, writer, reader, waitset;
    uint8_t *buffer; /* one serialized sample, reused */
    size_t capacity;
} ends_t;

static ends_t ends(uint32_t domain, const char *out_topic, const char *in_topic, int keep_all) {
    ends_t e = {0};
    e.participant = must(ferrodds_create_participant(domain, NULL), "participant");
    ferrodds_entity_t type = must(ferrodds_create_type_from_idl(IDL, "bench::Sample"), "type");
    ferrodds_qos_t *qos = ferrodds_create_qos();
    must(ferrodds_qset_reliability(qos, FERRODDS_RELIABILITY_RELIABLE, 10 * SECOND), "qos");
    if (keep_all) {
        must(ferrodds_qset_history(qos, FERRODDS_HISTORY_KEEP_ALL, 0), "qos");
        must(ferrodds_qset_resource_limits(qos, 10000, FERRODDS_LENGTH_UNLIMITED,
                                           FERRODDS_LENGTH_UNLIMITED), "qos");
    } else {
        must(ferrodds_qset_history(qos, FERRODDS_HISTORY_KEEP_LAST, 1), "qos");
    }
    ferrodds_entity_t out = must(ferrodds_create_topic(e.participant, out_topic, type), "topic");
    ferrodds_entity_t in = must(ferrodds_create_topic(e.participant, in_topic, type), "topic");
    e.writer = must(ferrodds_create_writer(e.participant, out, qos), "writer");
    e.reader = must(ferrodds_create_reader(e.participant, in, qos), "reader");
    ferrodds_delete_qos(qos);
    must(ferrodds_delete(type), "type");
    e.waitset = must(ferrodds_create_waitset(e.participant), "waitset");
    must(ferrodds_waitset_attach(e.waitset, e.reader, 0), "attach");
    return e;
}

/* Writes Sample { id, seq, payload } serialized into the reused buffer. */
static void write_sample(ends_t *e, int32_t id, uint32_t seq, const uint8_t *payload, uint32_t size) {
    size_t len = 16 + (size_t)size;
    size_t padded = (len + 3) & ~(size_t)3;
    if (padded > e->capacity) {
        e->buffer = realloc(e->buffer, padded);
        e->capacity = padded;
        if (e->buffer == NULL) {
            fprintf(stderr, "pingpong: out of memory\n");
            exit(1);
        }
    }
    uint8_t *b = e->buffer;
    b[0] = 0x00; b[1] = 0x01; b[2] = 0x00; b[3] = (uint8_t)(padded - len);
    memcpy(b + 4, &id, 4);
    memcpy(b + 8, &seq, 4);
    memcpy(b + 12, &size, 4);
    if (size) {
        memcpy(b + 16, payload, size);
    }
    memset(b + len, 0, padded - len);
    must(ferrodds_write(e->writer, b, padded), "write");
}

/* Waits up to `timeout_ns` for samples; takes up to BATCH of them into `s`: how many. */
static int32_t take(ends_t *e, ferrodds_sample_t *s, int64_t timeout_ns) {
    if (must(ferrodds_waitset_wait(e->waitset, NULL, 0, timeout_ns), "wait") == 0) {
        return 0;
    }
    int32_t n = ferrodds_take(e->reader, s, BATCH, FERRODDS_ANY_STATE);
    return n == FERRODDS_RETCODE_NO_DATA ? 0 : must(n, "take");
}

static int32_t field(const ferrodds_sample_t *s, size_t offset) {
    int32_t v = 0;
    if (s->info.valid_data && s->size >= offset + 4) {
        memcpy(&v, s->data + offset, 4);
    }
    return v;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int pong(uint32_t domain) {
    ends_t e = ends(domain, "bench_pong", "bench_ping", 0);
    ferrodds_sample_t s[BATCH];
    double deadline = now_s() + 600;
    while (now_s() < deadline) {
        int32_t n = take(&e, s, SECOND);
        int stop = 0;
        for (int32_t i = 0; i < n; i++) {
            if (!s[i].info.valid_data) {
                continue;
            }
            if (field(&s[i], 4) < 0) {
                stop = 1;
            } else {
                must(ferrodds_write(e.writer, s[i].data, s[i].size), "write");
            }
        }
        must(ferrodds_return_loan(e.reader, s, (size_t)n), "return");
        if (stop) {
            break;
        }
    }
    ferrodds_delete(e.participant);
    return 0;
}

static int ping(uint32_t domain, int64_t instances, int64_t per_instance, uint32_t size) {
    ends_t e = ends(domain, "bench_ping", "bench_pong", 0);
    must(ferrodds_wait_for_matched(e.writer, 1, 20 * SECOND), "no pong");
    must(ferrodds_wait_for_matched(e.reader, 1, 20 * SECOND), "no pong");
    uint8_t *payload = malloc(size ? size : 1);
    for (uint32_t i = 0; i < size; i++) {
        payload[i] = (uint8_t)i;
    }
    int64_t total = instances * per_instance;
    int64_t warmup = total < 200 ? total : 200;
    double *rtts = malloc(sizeof(double) * (size_t)(total > 0 ? total : 1));
    size_t count = 0;
    double budget = 0;
    ferrodds_sample_t s[BATCH];
    for (int64_t k = -warmup; k < total; k++) {
        if (k == 0) {
            budget = now_s() + 15;
        } else if (k > 0 && now_s() > budget) {
            break;
        }
        int32_t id = (int32_t)(((k % instances) + instances) % instances);
        uint32_t seq = (uint32_t)k;
        int64_t start = now_ns();
        write_sample(&e, id, seq, payload, size);
        int got = 0;
        while (!got) {
            int32_t n = take(&e, s, SECOND);
            for (int32_t i = 0; i < n; i++) {
                got |= (uint32_t)field(&s[i], 8) == seq;
            }
            must(ferrodds_return_loan(e.reader, s, (size_t)n), "return");
            if (!got && now_ns() - start > 10 * SECOND) {
                fprintf(stderr, "pingpong: no answer to %u\n", seq);
                return 1;
            }
            if (!got && n == 0) {
                /* The pong's writer may not have matched this reader yet: again. */
                write_sample(&e, id, seq, payload, size);
            }
        }
        if (k >= 0) {
            rtts[count++] = (double)(now_ns() - start) / 1000.0;
        }
    }
    write_sample(&e, -1, 0, NULL, 0);
    struct timespec pause = {0, 200000000};
    nanosleep(&pause, NULL);
    qsort(rtts, count, sizeof(double), compare);
    double sum = 0;
    for (size_t i = 0; i < count; i++) {
        sum += rtts[i];
    }
    double p50 = count % 2 ? rtts[count / 2] : (rtts[count / 2 - 1] + rtts[count / 2]) / 2;
    printf("{\"count\": %zu, \"p50_us\": %.3f, \"p90_us\": %.3f, \"mean_us\": %.3f}\n", count, p50,
           rtts[count * 9 / 10], sum / (double)count);
    ferrodds_delete(e.participant);
    return 0;
}

static int sub(uint32_t domain, int64_t count) {
    ends_t e = ends(domain, "bench_unused", "bench_data", 1);
    ferrodds_sample_t s[BATCH];
    int64_t n = 0;
    double first = 0, last = 0, deadline = now_s() + 600;
    while (n < count && now_s() < deadline) {
        int32_t got = take(&e, s, SECOND);
        if (got > 0) {
            double t = now_s();
            if (first == 0) {
                first = t;
            }
            last = t;
            n += got;
            must(ferrodds_return_loan(e.reader, s, (size_t)got), "return");
        } else if (last != 0 && now_s() - last > 3.0) {
            break; /* the publisher stopped early (its budget) */
        }
    }
    printf("{\"count\": %lld, \"samples_per_s\": %.1f}\n", (long long)n,
           last > first ? (double)(n - 1) / (last - first) : 0.0);
    ferrodds_delete(e.participant);
    return 0;
}

static int pub(uint32_t domain, int64_t count, uint32_t size) {
    ends_t e = ends(domain, "bench_data", "bench_unused", 1);
    must(ferrodds_wait_for_matched(e.writer, 1, 20 * SECOND), "no subscriber");
    struct timespec pause = {0, 200000000};
    nanosleep(&pause, NULL);
    uint8_t *payload = calloc(size ? size : 1, 1);
    double budget = now_s() + 15;
    for (int64_t k = 0; k < count && now_s() < budget; k++) {
        write_sample(&e, (int32_t)(k % 100), (uint32_t)k, payload, size);
    }
    must(ferrodds_wait_for_acks(e.writer, 30 * SECOND), "acknowledgments");
    ferrodds_delete(e.participant);
    return 0;
}

int main(int argc, char **argv) {
    const char *role = argc > 1 ? argv[1] : "";
    uint32_t domain = argc > 2 ? (uint32_t)atoi(argv[2]) : 0;
    if (strcmp(role, "pong") == 0 && argc >= 3) {
        return pong(domain);
    }
    if (strcmp(role, "ping") == 0 && argc == 6) {
        return ping(domain, atoll(argv[3]), atoll(argv[4]), (uint32_t)atoi(argv[5]));
    }
    if (strcmp(role, "sub") == 0 && argc == 4) {
        return sub(domain, atoll(argv[3]));
    }
    if (strcmp(role, "pub") == 0 && argc == 5) {
        return pub(domain, atoll(argv[3]), (uint32_t)atoi(argv[4]));
    }
    fprintf(stderr, "usage: pingpong pong DOMAIN [SIZE] | ping DOMAIN INSTANCES PER_INSTANCE SIZE | "
                    "sub DOMAIN COUNT | pub DOMAIN COUNT SIZE\n");
    return 2;
}
