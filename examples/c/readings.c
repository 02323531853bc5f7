/* FerroDDS from C: a writer and a reader of one topic in one program, a sample written as
 * JSON text and taken back as JSON and as its serialized bytes.
 *
 *   cargo build --release -p ferrodds-c
 *   cc -std=c11 examples/c/readings.c -I crates/ferrodds-c/include \
 *      -L target/release -lferrodds_c -Wl,-rpath,$PWD/target/release -o readings
 *   ./readings [DOMAIN]
 */
#include "ferrodds.h"

#include <stdio.h>
#include <stdlib.h>

#define SECONDS(s) ((int64_t)(s) * 1000000000)

/* Stops the program with what went wrong when `rc` is an error. */
static int32_t check(int32_t rc, const char *what) {
    if (rc < 0) {
        fprintf(stderr, "%s: %s\n", what, ferrodds_last_error());
        exit(1);
    }
    return rc;
}

int main(int argc, char **argv) {
    uint32_t domain = argc > 1 ? (uint32_t)atoi(argv[1]) : 0;
    ferrodds_entity_t type = check(ferrodds_create_type_from_idl(
        "module demo { @final struct Reading { @key long id; string text; }; };",
        "demo::Reading"), "type");
    ferrodds_entity_t pp = check(ferrodds_create_participant(domain, NULL), "participant");
    ferrodds_entity_t topic = check(ferrodds_create_topic(pp, "readings", type), "topic");

    ferrodds_qos_t *qos = ferrodds_create_qos();
    check(ferrodds_qset_reliability(qos, FERRODDS_RELIABILITY_RELIABLE, SECONDS(1)), "qos");
    ferrodds_entity_t writer = check(ferrodds_create_writer(pp, topic, qos), "writer");
    ferrodds_entity_t reader = check(ferrodds_create_reader(pp, topic, qos), "reader");
    ferrodds_delete_qos(qos);
    check(ferrodds_wait_for_matched(writer, 1, SECONDS(5)), "match");

    check(ferrodds_write_json(writer, "{\"id\": 7, \"text\": \"hi\"}"), "write");

    ferrodds_entity_t ws = check(ferrodds_create_waitset(pp), "waitset");
    check(ferrodds_waitset_attach(ws, reader, 0), "attach");
    if (check(ferrodds_waitset_wait(ws, NULL, 0, SECONDS(5)), "wait") == 0) {
        fprintf(stderr, "no sample within 5 s\n");
        return 1;
    }
    /* Read as JSON, then take the same sample serialized. */
    ferrodds_sample_t s[8];
    int32_t n = check(ferrodds_read_json(reader, s, 8, FERRODDS_ANY_STATE), "read");
    for (int32_t i = 0; i < n; i++) {
        printf("json: %s\n", (const char *)s[i].data);
    }
    check(ferrodds_return_loan(reader, s, (size_t)n), "return");
    n = check(ferrodds_take(reader, s, 8, FERRODDS_ANY_STATE), "take");
    for (int32_t i = 0; i < n; i++) {
        printf("bytes:");
        for (size_t k = 0; k < s[i].size; k++) {
            printf(" %02x", s[i].data[k]);
        }
        printf("\n");
    }
    check(ferrodds_return_loan(reader, s, (size_t)n), "return");

    check(ferrodds_delete(pp), "delete");
    check(ferrodds_delete(type), "delete");
    return 0;
}
