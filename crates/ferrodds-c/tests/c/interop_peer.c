/* A FerroDDS peer written in C against include/ferrodds.h alone, for the interop tests
 * with Cyclone DDS (tests/c_api.rs; the Cyclone side is tests/interop/cyclone_peer.py).
 * The type and the samples are cyclone_peer.py's interop::Reading (tests/interop/README.md).
 *
 *   interop_peer pub DOMAIN TOPIC COUNT   writes readings 0..COUNT-1 (as JSON text), then
 *                                         disposes sensor 1, waits for acknowledgments
 *   interop_peer sub DOMAIN TOPIC COUNT   prints each sample as one line: its instance
 *                                         state, validity, the serialized bytes in hex,
 *                                         and its JSON view; exits once COUNT valid
 *                                         samples and a dispose came (1 after 30 s). */
#include "ferrodds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *IDL =
    "module interop {\n"
    "  @final struct Position { double x; double y; double z; };\n"
    "  @appendable struct Reading {\n"
    "    @key int32 sensor_id; @key string name; string unit; Position pos;\n"
    "    sequence<double> values; sequence<uint8> blob; int64 stamp;\n"
    "  };\n"
    "};\n";

static const int64_t SECOND = 1000000000;

static int32_t must(int32_t rc, const char *what) {
    if (rc < 0) {
        fprintf(stderr, "interop_peer: %s: %s\n", what, ferrodds_last_error());
        exit(4);
    }
    return rc;
}

/* Reading i as FerroDDS's JSON view takes it. */
static void reading_json(int i, char *out, size_t cap) {
    int n = snprintf(out, cap,
                     "{\"sensor_id\": %d, \"name\": \"sensor-%d\", \"unit\": \"\\u00b0C\", "
                     "\"pos\": {\"x\": %d.0, \"y\": %d.0, \"z\": %.1f}, \"values\": [",
                     i % 3, i % 3, i, -i, 0.5 * i);
    for (int k = 0; k < i % 5; k++) {
        n += snprintf(out + n, cap - n, "%s%.2f", k ? ", " : "", i * 0.25);
    }
    n += snprintf(out + n, cap - n, "], \"blob\": [");
    for (int k = 0; k < i % 11; k++) {
        n += snprintf(out + n, cap - n, "%s%d", k ? ", " : "", (i * 7 + k) % 256);
    }
    snprintf(out + n, cap - n, "], \"stamp\": %lld}", 1700000000000LL + i);
}

static ferrodds_qos_t *reliable_qos(void) {
    ferrodds_qos_t *qos = ferrodds_create_qos();
    must(ferrodds_qset_reliability(qos, FERRODDS_RELIABILITY_RELIABLE, 10 * SECOND), "qos");
    must(ferrodds_qset_history(qos, FERRODDS_HISTORY_KEEP_ALL, 0), "qos");
    /* Cyclone's writers offer XCDR2 only; ours too, so that the bytes compare. */
    int16_t xcdr2 = FERRODDS_DATA_REPRESENTATION_XCDR2;
    must(ferrodds_qset_data_representation(qos, 1, &xcdr2), "qos");
    return qos;
}

static int pub(ferrodds_entity_t participant, ferrodds_entity_t topic, int count) {
    ferrodds_qos_t *qos = reliable_qos();
    must(ferrodds_qset_writer_data_lifecycle(qos, false), "qos");
    ferrodds_entity_t writer = must(ferrodds_create_writer(participant, topic, qos), "writer");
    ferrodds_delete_qos(qos);
    must(ferrodds_wait_for_matched(writer, 1, 15 * SECOND), "no Cyclone reader matched");
    char text[4096];
    for (int i = 0; i < count; i++) {
        reading_json(i, text, sizeof text);
        must(ferrodds_write_json(writer, text), "write");
    }
    must(ferrodds_dispose_json(writer, "{\"sensor_id\": 1, \"name\": \"sensor-1\"}"), "dispose");
    must(ferrodds_wait_for_acks(writer, 15 * SECOND), "acknowledgments");
    printf("{\"done\": %d}\n", count);
    return 0;
}

static int sub(ferrodds_entity_t participant, ferrodds_entity_t topic, int count) {
    ferrodds_qos_t *qos = reliable_qos();
    ferrodds_entity_t reader = must(ferrodds_create_reader(participant, topic, qos), "reader");
    ferrodds_delete_qos(qos);
    ferrodds_entity_t ws = must(ferrodds_create_waitset(participant), "waitset");
    must(ferrodds_waitset_attach(ws, reader, 0), "attach");
    int valid = 0, disposed = 0;
    time_t end = time(NULL) + 30;
    while ((valid < count || !disposed) && time(NULL) < end) {
        if (must(ferrodds_waitset_wait(ws, NULL, 0, SECOND), "wait") == 0) {
            continue;
        }
        /* The same samples twice: their JSON view (read), then their bytes (take). */
        ferrodds_sample_t json[64], bytes[64];
        int32_t n = ferrodds_read_json(reader, json, 64, FERRODDS_NOT_READ_SAMPLE_STATE);
        if (n == FERRODDS_RETCODE_NO_DATA) {
            continue;
        }
        must(n, "read");
        int32_t m = must(ferrodds_take(reader, bytes, (size_t)n, FERRODDS_READ_SAMPLE_STATE), "take");
        if (m != n) {
            fprintf(stderr, "interop_peer: read %d samples, took %d\n", n, m);
            return 4;
        }
        for (int i = 0; i < n; i++) {
            printf("{\"valid_data\": %s, \"instance_state\": %u, \"hex\": \"",
                   json[i].info.valid_data ? "true" : "false", json[i].info.instance_state);
            for (size_t k = 0; k < bytes[i].size; k++) {
                printf("%02x", bytes[i].data[k]);
            }
            printf("\", \"sample\": %s}\n", (const char *)json[i].data);
            valid += json[i].info.valid_data;
            disposed |= json[i].info.instance_state == FERRODDS_NOT_ALIVE_DISPOSED_INSTANCE_STATE;
        }
        fflush(stdout);
        must(ferrodds_return_loan(reader, json, (size_t)n), "return json");
        must(ferrodds_return_loan(reader, bytes, (size_t)m), "return bytes");
    }
    if (valid < count || !disposed) {
        fprintf(stderr, "interop_peer: timeout: %d/%d valid samples, dispose %s\n", valid, count,
                disposed ? "seen" : "not seen");
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 5 || (strcmp(argv[1], "pub") != 0 && strcmp(argv[1], "sub") != 0)) {
        fprintf(stderr, "usage: interop_peer pub|sub DOMAIN TOPIC COUNT\n");
        return 4;
    }
    ferrodds_entity_t participant = must(ferrodds_create_participant((uint32_t)atoi(argv[2]), NULL), "participant");
    ferrodds_entity_t type = must(ferrodds_create_type_from_idl(IDL, "interop::Reading"), "type");
    ferrodds_entity_t topic = must(ferrodds_create_topic(participant, argv[3], type), "topic");
    int count = atoi(argv[4]);
    int rc = strcmp(argv[1], "pub") == 0 ? pub(participant, topic, count) : sub(participant, topic, count);
    must(ferrodds_delete(participant), "delete");
    return rc;
}
