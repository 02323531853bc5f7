/* The C API's own test, using nothing but include/ferrodds.h: entities, types from IDL
 * and from TypeObjects, serialized and JSON samples compared byte for byte, dispose,
 * a late joiner, wait sets, listeners, statuses, and misuse that must be an error.
 * tests/c_api.rs builds and runs it: api_test DOMAIN. Exits 0 when every check holds. */
#define _POSIX_C_SOURCE 200809L
#include "ferrodds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int checks = 0;

#define CHECK(cond)                                                                    \
    do {                                                                               \
        checks++;                                                                      \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__,   \
                    __LINE__, #cond, ferrodds_last_error());                           \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

/* A call that must succeed: its value (a handle, a count). */
#define OK(call) ok_((call), #call, __LINE__)
static int32_t ok_(int32_t rc, const char *what, int line) {
    checks++;
    if (rc < 0) {
        fprintf(stderr, "%s:%d: %s returned %s: %s\n", __FILE__, line, what,
                ferrodds_strretcode(rc), ferrodds_last_error());
        exit(1);
    }
    return rc;
}

/* A call that must fail with `code`, and say so in the last error. */
#define FAILS(call, code, text) fails_((call), (code), (text), #call, __LINE__)
static void fails_(int32_t rc, int32_t code, const char *text, const char *what, int line) {
    checks++;
    if (rc != code || strstr(ferrodds_last_error(), text) == NULL) {
        fprintf(stderr, "%s:%d: %s returned %s (%d), not %s, with \"%s\" (want \"%s\")\n",
                __FILE__, line, what, ferrodds_strretcode(rc), rc, ferrodds_strretcode(code),
                ferrodds_last_error(), text);
        exit(1);
    }
}

static const char *IDL =
    "module demo {\n"
    "  @final struct Reading {\n"
    "    @key long id;\n"
    "    string text;\n"
    "  };\n"
    "};\n";

/* demo::Reading { id = 7, text = "hi" } in XCDR1, little endian, as Cyclone DDS writes it:
 * the encapsulation header (its options counting 1 byte of padding at the end), the id,
 * the string's length (with its NUL), its characters, the padding. */
static const uint8_t READING_7[] = {0x00, 0x01, 0x00, 0x01, 7, 0, 0, 0, 3, 0, 0, 0, 'h', 'i', 0, 0};
/* The same without the padding: the writer pads it and says so in the options. */
static const uint8_t READING_7_UNPADDED[] = {0x00, 0x01, 0x00, 0x00, 7, 0, 0, 0, 3, 0, 0, 0, 'h', 'i', 0};

static const int64_t SECOND = 1000000000;

static int data_available = 0;
static ferrodds_entity_t heard_entity = 0;

static void on_data(ferrodds_entity_t entity, uint32_t status, void *arg) {
    if (status == FERRODDS_DATA_AVAILABLE_STATUS && arg == (void *)&data_available) {
        __atomic_store_n(&heard_entity, entity, __ATOMIC_SEQ_CST);
        __atomic_fetch_add(&data_available, 1, __ATOMIC_SEQ_CST);
    }
}

/* Waits (up to 5 s) for one sample in `reader` and takes it into `s`. */
static void take_one(ferrodds_entity_t participant, ferrodds_entity_t reader, ferrodds_sample_t *s,
                     int json) {
    ferrodds_entity_t ws = OK(ferrodds_create_waitset(participant));
    OK(ferrodds_waitset_attach(ws, reader, 42));
    intptr_t arg = 0;
    CHECK(OK(ferrodds_waitset_wait(ws, &arg, 1, 5 * SECOND)) == 1);
    CHECK(arg == 42);
    OK(ferrodds_delete(ws));
    int32_t n = json ? ferrodds_take_json(reader, s, 1, 0) : ferrodds_take(reader, s, 1, 0);
    CHECK(OK(n) == 1);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: api_test DOMAIN\n");
        return 2;
    }
    uint32_t domain = (uint32_t)atoi(argv[1]);

    /* Types: from IDL, out as TypeObjects, back in from them. */
    ferrodds_entity_t type = OK(ferrodds_create_type_from_idl(IDL, "demo::Reading"));
    size_t size = 0;
    FAILS(ferrodds_get_type_object(type, 0, NULL, 0, &size), FERRODDS_RETCODE_BUFFER_TOO_SMALL,
          "the buffer holds 0");
    CHECK(size > 16);
    uint8_t *object = malloc(size);
    size_t got = 0;
    CHECK(OK(ferrodds_get_type_object(type, 0, object, size, &got)) == 1);
    CHECK(got == size);
    const uint8_t *objects[1] = {object};
    ferrodds_entity_t again = OK(ferrodds_create_type_from_type_objects(objects, &size, 1, NULL));
    uint8_t *object2 = malloc(size);
    CHECK(OK(ferrodds_get_type_object(again, 0, object2, size, &got)) == 1);
    CHECK(got == size && memcmp(object, object2, size) == 0);
    free(object);
    free(object2);

    ferrodds_entity_t participant = OK(ferrodds_create_participant(domain, NULL));
    ferrodds_entity_t topic = OK(ferrodds_create_topic(participant, "c_api_readings", type));
    ferrodds_qos_t *qos = ferrodds_create_qos();
    OK(ferrodds_qset_reliability(qos, FERRODDS_RELIABILITY_RELIABLE, SECOND));
    OK(ferrodds_qset_durability(qos, FERRODDS_DURABILITY_TRANSIENT_LOCAL));
    OK(ferrodds_qset_history(qos, FERRODDS_HISTORY_KEEP_LAST, 4));
    const char *partitions[1] = {"c-api"};
    OK(ferrodds_qset_partition(qos, 1, partitions));
    ferrodds_entity_t publisher = OK(ferrodds_create_publisher(participant, qos));
    ferrodds_entity_t subscriber = OK(ferrodds_create_subscriber(participant, qos));
    CHECK(ferrodds_get_parent(publisher) == participant);
    ferrodds_entity_t writer = OK(ferrodds_create_writer(publisher, topic, qos));
    CHECK(ferrodds_get_participant(writer) == participant);
    /* What to serialize in: a final type's default, XCDR1, or what the QoS puts first. */
    CHECK(OK(ferrodds_get_data_representation(writer)) == FERRODDS_DATA_REPRESENTATION_XCDR1);
    ferrodds_qos_t *xcdr2 = ferrodds_create_qos();
    const int16_t second_version[1] = {FERRODDS_DATA_REPRESENTATION_XCDR2};
    OK(ferrodds_qset_data_representation(xcdr2, 1, second_version));
    ferrodds_entity_t writer2 = OK(ferrodds_create_writer(participant, topic, xcdr2));
    CHECK(OK(ferrodds_get_data_representation(writer2)) == FERRODDS_DATA_REPRESENTATION_XCDR2);
    FAILS(ferrodds_get_data_representation(topic), FERRODDS_RETCODE_BAD_PARAMETER, "not a writer");
    OK(ferrodds_delete(writer2));
    ferrodds_delete_qos(xcdr2);

    /* A late joiner: written before the reader exists, TRANSIENT_LOCAL hands it over. */
    OK(ferrodds_write(writer, READING_7_UNPADDED, sizeof READING_7_UNPADDED));
    ferrodds_entity_t reader = OK(ferrodds_create_reader(subscriber, topic, qos));
    OK(ferrodds_set_listener(reader, FERRODDS_DATA_AVAILABLE_STATUS, on_data, &data_available));
    OK(ferrodds_wait_for_matched(writer, 1, 5 * SECOND));
    ferrodds_matched_status_t matched;
    OK(ferrodds_get_matched_status(reader, &matched));
    CHECK(matched.current_count == 1 && matched.total_count == 1);
    uint8_t writer_guid[16];
    OK(ferrodds_get_guid(writer, writer_guid));
    CHECK(memcmp(matched.last_handle, writer_guid, 16) == 0);

    ferrodds_sample_t s;
    take_one(participant, reader, &s, 0);
    CHECK(s.info.valid_data);
    CHECK(s.size == sizeof READING_7 && memcmp(s.data, READING_7, sizeof READING_7) == 0);
    CHECK(s.info.instance_state == FERRODDS_ALIVE_INSTANCE_STATE);
    CHECK(s.info.view_state == FERRODDS_NEW_VIEW_STATE);
    CHECK(memcmp(s.info.publication_handle, writer_guid, 16) == 0);
    CHECK(s.info.source_timestamp_ns > 0);
    ferrodds_sample_t copy = s;
    OK(ferrodds_return_loan(reader, &s, 1));
    CHECK(s.data == NULL);
    FAILS(ferrodds_return_loan(reader, &copy, 1), FERRODDS_RETCODE_BAD_PARAMETER,
          "was not lent by reader");

    /* JSON in, serialized out; serialized in, JSON out. */
    OK(ferrodds_write_json(writer, "{\"id\": 8, \"text\": \"h\\u00e9\"}"));
    take_one(participant, reader, &s, 0);
    static const uint8_t READING_8[] = {0x00, 0x01, 0x00, 0x00, 8, 0, 0, 0, 4, 0, 0, 0, 'h', 0xc3, 0xa9, 0};
    CHECK(s.size == sizeof READING_8 && memcmp(s.data, READING_8, sizeof READING_8) == 0);
    OK(ferrodds_return_loan(reader, &s, 1));
    OK(ferrodds_write(writer, READING_7, sizeof READING_7));
    take_one(participant, reader, &s, 1);
    CHECK(strcmp((const char *)s.data, "{\"id\":7,\"text\":\"hi\"}") == 0);
    CHECK(s.size == strlen((const char *)s.data));
    CHECK(s.info.view_state == FERRODDS_NOT_NEW_VIEW_STATE);
    OK(ferrodds_return_loan(reader, &s, 1));

    /* Serialized in place, into a buffer the writer lends: the sample arrives as written
       (padded, as ferrodds_write pads); a buffer is written or given back once. */
    uint8_t *lent = NULL;
    OK(ferrodds_request_buffer(writer, 64, &lent));
    CHECK(lent != NULL);
    memcpy(lent, READING_7_UNPADDED, sizeof READING_7_UNPADDED);
    OK(ferrodds_write_buffer(writer, lent, sizeof READING_7_UNPADDED, -1));
    take_one(participant, reader, &s, 0);
    CHECK(s.size == sizeof READING_7 && memcmp(s.data, READING_7, sizeof READING_7) == 0);
    CHECK(s.info.source_timestamp_ns > 0);
    OK(ferrodds_return_loan(reader, &s, 1));
    FAILS(ferrodds_write_buffer(writer, lent, sizeof READING_7, -1), FERRODDS_RETCODE_BAD_PARAMETER,
          "is not one writer");
    OK(ferrodds_request_buffer(writer, sizeof READING_7, &lent));
    memcpy(lent, READING_7, sizeof READING_7);
    OK(ferrodds_write_buffer(writer, lent, sizeof READING_7, 1234567890123456789LL));
    take_one(participant, reader, &s, 0);
    CHECK(s.size == sizeof READING_7 && memcmp(s.data, READING_7, sizeof READING_7) == 0);
    CHECK(s.info.source_timestamp_ns == 1234567890123456789LL);
    OK(ferrodds_return_loan(reader, &s, 1));
    OK(ferrodds_request_buffer(writer, 8, &lent));
    FAILS(ferrodds_write_buffer(writer, lent, 9, -1), FERRODDS_RETCODE_BAD_PARAMETER,
          "the buffer holds 4 to");
    OK(ferrodds_request_buffer(writer, 8, &lent));
    memcpy(lent, "abcdefgh", 8);
    FAILS(ferrodds_write_buffer(writer, lent, 8, -1), FERRODDS_RETCODE_BAD_PARAMETER,
          "encapsulation");
    OK(ferrodds_request_buffer(writer, 8, &lent));
    OK(ferrodds_return_buffer(writer, lent));
    FAILS(ferrodds_return_buffer(writer, lent), FERRODDS_RETCODE_BAD_PARAMETER,
          "is not one writer");
    FAILS(ferrodds_request_buffer(writer, 3, &lent), FERRODDS_RETCODE_BAD_PARAMETER,
          "encapsulation header");
    FAILS(ferrodds_request_buffer(reader, 8, &lent), FERRODDS_RETCODE_BAD_PARAMETER,
          "not a writer");
    FAILS(ferrodds_request_buffer(writer, 8, NULL), FERRODDS_RETCODE_BAD_PARAMETER,
          "buffer is a null pointer");

    /* The first sample may have come before the listener was set; the listener runs on a
       FerroDDS thread, possibly after the take that this thread's wait allowed (bounded:
       5 s). */
    for (int i = 0; i < 250 && __atomic_load_n(&data_available, __ATOMIC_SEQ_CST) < 2; i++) {
        nanosleep(&(struct timespec){0, 20000000}, NULL);
    }
    CHECK(__atomic_load_n(&data_available, __ATOMIC_SEQ_CST) >= 2);
    CHECK(__atomic_load_n(&heard_entity, __ATOMIC_SEQ_CST) == reader);

    /* Dispose: a sample without data, its key, the instance disposed. */
    OK(ferrodds_dispose(writer, READING_7, sizeof READING_7));
    take_one(participant, reader, &s, 1);
    CHECK(!s.info.valid_data);
    CHECK(s.info.instance_state == FERRODDS_NOT_ALIVE_DISPOSED_INSTANCE_STATE);
    CHECK(strstr((const char *)s.data, "\"id\":7") != NULL);
    OK(ferrodds_return_loan(reader, &s, 1));

    /* A read condition selecting only disposed instances stays quiet for a new one. */
    ferrodds_entity_t disposed = OK(ferrodds_create_readcondition(reader,
        FERRODDS_NOT_ALIVE_DISPOSED_INSTANCE_STATE | FERRODDS_NOT_READ_SAMPLE_STATE));
    ferrodds_entity_t ws = OK(ferrodds_create_waitset(participant));
    OK(ferrodds_waitset_attach(ws, disposed, 1));
    OK(ferrodds_write_json(writer, "{\"id\": 9, \"text\": \"\"}"));
    intptr_t arg = 0;
    CHECK(OK(ferrodds_waitset_wait(ws, &arg, 1, SECOND / 5)) == 0);
    OK(ferrodds_dispose_json(writer, "{\"id\": 9, \"text\": \"\"}"));
    CHECK(OK(ferrodds_waitset_wait(ws, &arg, 1, 5 * SECOND)) == 1 && arg == 1);
    ferrodds_sample_t two[4];
    CHECK(OK(ferrodds_read(reader, two, 4, 0)) == 2);
    OK(ferrodds_return_loan(reader, two, 2));

    /* A content-filtered reader, a query condition, a status condition. */
    ferrodds_entity_t ftopic = OK(ferrodds_create_topic(participant, "c_api_filtered", type));
    ferrodds_entity_t fwriter = OK(ferrodds_create_writer(participant, ftopic, qos));
    ferrodds_entity_t matched_cond =
        OK(ferrodds_create_statuscondition(fwriter, FERRODDS_PUBLICATION_MATCHED_STATUS));
    ferrodds_entity_t ws2 = OK(ferrodds_create_waitset(participant));
    OK(ferrodds_waitset_attach(ws2, matched_cond, 5));
    const char *like[1] = {"'k%'"};
    ferrodds_entity_t freader = OK(ferrodds_create_filtered_reader(
        participant, ftopic, qos, "text LIKE %0 AND id > 1", like, 1));
    ferrodds_entity_t plain = OK(ferrodds_create_reader(participant, ftopic, qos));
    OK(ferrodds_wait_for_matched(fwriter, 2, 5 * SECOND));
    CHECK(OK(ferrodds_waitset_wait(ws2, &arg, 1, 5 * SECOND)) == 1 && arg == 5);
    OK(ferrodds_get_matched_status(fwriter, &matched));
    CHECK(matched.current_count == 2);
    CHECK(matched.total_count_change >= 1 && matched.current_count_change >= 1);
    CHECK(OK(ferrodds_waitset_wait(ws2, &arg, 1, SECOND / 10)) == 0); /* read: no change */
    OK(ferrodds_get_matched_status(fwriter, &matched));
    CHECK(matched.current_count == 2 && matched.total_count_change == 0 &&
          matched.current_count_change == 0); /* each read resets the changes */
    OK(ferrodds_write_json(fwriter, "{\"id\": 1, \"text\": \"keep\"}"));
    OK(ferrodds_write_json(fwriter, "{\"id\": 2, \"text\": \"keep\"}"));
    OK(ferrodds_write_json(fwriter, "{\"id\": 3, \"text\": \"drop\"}"));
    OK(ferrodds_write_json(fwriter, "{\"id\": 4, \"text\": \"kite\"}"));
    OK(ferrodds_wait_for_acks(fwriter, 5 * SECOND));
    CHECK(OK(ferrodds_take_json(freader, two, 4, 0)) == 2);
    CHECK(strcmp((const char *)two[0].data, "{\"id\":2,\"text\":\"keep\"}") == 0);
    CHECK(strcmp((const char *)two[1].data, "{\"id\":4,\"text\":\"kite\"}") == 0);
    OK(ferrodds_return_loan(freader, two, 2));
    const char *three[1] = {"3"};
    ferrodds_entity_t odd = OK(ferrodds_create_querycondition(
        plain, FERRODDS_NOT_READ_SAMPLE_STATE, "id = 1 OR id = %0", three, 1));
    ferrodds_entity_t ws3 = OK(ferrodds_create_waitset(participant));
    OK(ferrodds_waitset_attach(ws3, odd, 3));
    CHECK(OK(ferrodds_waitset_wait(ws3, &arg, 1, 5 * SECOND)) == 1 && arg == 3);
    CHECK(OK(ferrodds_take_json(odd, two, 4, 0)) == 2);
    CHECK(strstr((const char *)two[0].data, "\"id\":1") != NULL);
    CHECK(strstr((const char *)two[1].data, "\"id\":3") != NULL);
    OK(ferrodds_return_loan(odd, two, 2));
    CHECK(OK(ferrodds_waitset_wait(ws3, &arg, 1, SECOND / 10)) == 0);
    CHECK(OK(ferrodds_take(plain, two, 4, 0)) == 2); /* 2 and 4 stayed */
    OK(ferrodds_return_loan(plain, two, 2));
    FAILS(ferrodds_create_querycondition(plain, 0, "weight > 1", NULL, 0),
          FERRODDS_RETCODE_BAD_PARAMETER, "weight: no such member");
    FAILS(ferrodds_create_filtered_reader(participant, ftopic, qos, "id = ", NULL, 0),
          FERRODDS_RETCODE_BAD_PARAMETER, "at character 5");
    FAILS(ferrodds_create_statuscondition(fwriter, 1u << 20), FERRODDS_RETCODE_BAD_PARAMETER,
          "status mask");

    /* A topic of the same name and another type elsewhere: INCONSISTENT_TOPIC. */
    ferrodds_entity_t clash_type = OK(ferrodds_create_type_from_idl(
        "module demo { @final struct Clash { double v; }; };", "demo::Clash"));
    ferrodds_entity_t p2 = OK(ferrodds_create_participant(domain, NULL));
    ferrodds_entity_t clash = OK(ferrodds_create_topic(p2, "c_api_filtered", clash_type));
    OK(ferrodds_create_reader(p2, clash, NULL));
    ferrodds_count_status_t inconsistent = {0};
    for (int i = 0; i < 100 && inconsistent.total_count == 0; i++) {
        OK(ferrodds_waitset_wait(ws3, &arg, 1, SECOND / 20)); /* a 50 ms pause */
        OK(ferrodds_get_count_status(ftopic, FERRODDS_INCONSISTENT_TOPIC_STATUS, &inconsistent));
    }
    CHECK(inconsistent.total_count == 1 && inconsistent.total_count_change == 1);
    OK(ferrodds_get_count_status(ftopic, FERRODDS_INCONSISTENT_TOPIC_STATUS, &inconsistent));
    CHECK(inconsistent.total_count == 1 && inconsistent.total_count_change == 0);
    OK(ferrodds_get_count_status(clash, FERRODDS_INCONSISTENT_TOPIC_STATUS, &inconsistent));
    CHECK(inconsistent.total_count >= 1);
    FAILS(ferrodds_get_count_status(ftopic, FERRODDS_SAMPLE_LOST_STATUS, &inconsistent),
          FERRODDS_RETCODE_BAD_PARAMETER, "not a status of a topic");
    OK(ferrodds_delete(p2));
    OK(ferrodds_delete(clash_type));

    /* Misuse: an error with a message, never a crash. */
    FAILS(ferrodds_create_topic(participant, NULL, type), FERRODDS_RETCODE_BAD_PARAMETER,
          "ferrodds_create_topic: name is a null pointer");
    FAILS(ferrodds_create_topic(participant, "t", writer), FERRODDS_RETCODE_BAD_PARAMETER,
          "is a writer, not a type");
    FAILS(ferrodds_write(writer, NULL, 4), FERRODDS_RETCODE_BAD_PARAMETER, "data is a null pointer");
    FAILS(ferrodds_write(topic, READING_7, sizeof READING_7), FERRODDS_RETCODE_BAD_PARAMETER,
          "is a topic, not a writer");
    FAILS(ferrodds_write(writer, (const uint8_t *)"abc", 3), FERRODDS_RETCODE_BAD_PARAMETER,
          "encapsulation");
    FAILS(ferrodds_write_json(writer, "{\"id\": \"seven\"}"), FERRODDS_RETCODE_BAD_PARAMETER,
          "not a sample of the writer's type");
    FAILS(ferrodds_write(123456, READING_7, sizeof READING_7), FERRODDS_RETCODE_BAD_PARAMETER,
          "123456 is not an entity handle");
    FAILS(ferrodds_take(reader, NULL, 4, 0), FERRODDS_RETCODE_BAD_PARAMETER,
          "samples is a null pointer");
    FAILS(ferrodds_take(reader, two, 4, 0x80), FERRODDS_RETCODE_BAD_PARAMETER, "state mask");
    FAILS(ferrodds_create_type_from_idl("module m { struct X { long a; };", "m::X"),
          FERRODDS_RETCODE_BAD_PARAMETER, "the IDL");
    FAILS(ferrodds_create_type_from_idl(IDL, "demo::Missing"), FERRODDS_RETCODE_BAD_PARAMETER,
          "no type demo::Missing");
    FAILS(ferrodds_qset_history(qos, FERRODDS_HISTORY_KEEP_LAST, 0),
          FERRODDS_RETCODE_BAD_PARAMETER, "at least 1");
    FAILS(ferrodds_qset_reliability(NULL, FERRODDS_RELIABILITY_RELIABLE, 0),
          FERRODDS_RETCODE_BAD_PARAMETER, "qos is a null pointer");
    FAILS(ferrodds_get_matched_status(reader, NULL), FERRODDS_RETCODE_BAD_PARAMETER,
          "status is a null pointer");
    ferrodds_entity_t empty = OK(ferrodds_create_waitset(participant));
    FAILS(ferrodds_waitset_wait(empty, NULL, 0, 0), FERRODDS_RETCODE_PRECONDITION_NOT_MET,
          "nothing is attached");
    ferrodds_entity_t other = OK(ferrodds_create_participant(domain, NULL));
    ferrodds_entity_t other_topic = OK(ferrodds_create_topic(other, "c_api_readings", type));
    FAILS(ferrodds_create_writer(publisher, other_topic, NULL),
          FERRODDS_RETCODE_PRECONDITION_NOT_MET, "belongs to participant");
    OK(ferrodds_delete(other));
    FAILS(ferrodds_create_topic(other, "t", type), FERRODDS_RETCODE_ALREADY_DELETED, "was deleted");

    /* set_qos: a writer in another partition matches the reader once moved into its own;
     * a policy that may not change is refused, naming it. */
    ferrodds_qos_t *away = ferrodds_create_qos();
    OK(ferrodds_qset_reliability(away, FERRODDS_RELIABILITY_RELIABLE, SECOND));
    OK(ferrodds_qset_durability(away, FERRODDS_DURABILITY_TRANSIENT_LOCAL));
    OK(ferrodds_qset_history(away, FERRODDS_HISTORY_KEEP_LAST, 4));
    const char *elsewhere[1] = {"c-api-elsewhere"};
    OK(ferrodds_qset_partition(away, 1, elsewhere));
    ferrodds_entity_t moving = OK(ferrodds_create_writer(participant, topic, away));
    FAILS(ferrodds_wait_for_matched(moving, 1, SECOND / 5), FERRODDS_RETCODE_TIMEOUT, "");
    OK(ferrodds_qset_partition(away, 1, partitions));
    OK(ferrodds_set_qos(moving, away));
    OK(ferrodds_wait_for_matched(moving, 1, 5 * SECOND));
    OK(ferrodds_qset_history(away, FERRODDS_HISTORY_KEEP_LAST, 2));
    FAILS(ferrodds_set_qos(moving, away), FERRODDS_RETCODE_IMMUTABLE_POLICY, "HISTORY");
    FAILS(ferrodds_set_qos(topic, away), FERRODDS_RETCODE_UNSUPPORTED,
          "set_qos takes participants, writers, readers");
    ferrodds_delete_qos(away);
    OK(ferrodds_delete(moving));
    /* A publisher's new partition moves the writers it made: the reader loses `writer`,
     * then has it again when the publisher comes back. */
    ferrodds_qos_t *moved = ferrodds_create_qos();
    OK(ferrodds_qset_partition(moved, 1, elsewhere));
    OK(ferrodds_set_qos(publisher, moved));
    struct timespec pause = {0, 20000000};
    for (int i = 0; i < 250; i++) {
        OK(ferrodds_get_matched_status(writer, &matched));
        if (matched.current_count == 0) {
            break;
        }
        nanosleep(&pause, NULL);
    }
    CHECK(matched.current_count == 0);
    OK(ferrodds_qset_partition(moved, 1, partitions));
    OK(ferrodds_set_qos(publisher, moved));
    OK(ferrodds_wait_for_matched(writer, 1, 5 * SECOND));
    OK(ferrodds_qset_presentation(moved, FERRODDS_PRESENTATION_GROUP, 1, 0));
    FAILS(ferrodds_set_qos(publisher, moved), FERRODDS_RETCODE_IMMUTABLE_POLICY, "PRESENTATION");
    ferrodds_delete_qos(moved);

    /* Instances by handle: register and look up (writer and reader), read and take by
     * instance and by next instance, dispose and unregister by handle. */
    static const uint8_t READING_42[] = {0x00, 0x01, 0x00, 0x01, 42, 0, 0, 0, 3, 0, 0, 0, 'h', 'i', 0, 0};
    ferrodds_sample_t inst[4];
    int32_t n;
    while ((n = ferrodds_take(reader, inst, 4, 0)) > 0) {
        OK(ferrodds_return_loan(reader, inst, (size_t)n));
    }
    uint8_t h7[16], h42[16], found[16];
    const uint8_t nil[16] = {0};
    OK(ferrodds_register_instance(writer, READING_7, sizeof READING_7, h7));
    CHECK(OK(ferrodds_lookup_instance(writer, READING_7, sizeof READING_7, found)) == 1);
    CHECK(memcmp(h7, found, 16) == 0);
    CHECK(OK(ferrodds_lookup_instance(writer, READING_42, sizeof READING_42, found)) == 0);
    CHECK(memcmp(found, nil, 16) == 0);
    OK(ferrodds_write(writer, READING_7, sizeof READING_7));
    OK(ferrodds_write(writer, READING_42, sizeof READING_42));
    OK(ferrodds_write(writer, READING_7, sizeof READING_7));
    CHECK(OK(ferrodds_lookup_instance(writer, READING_42, sizeof READING_42, h42)) == 1);
    OK(ferrodds_wait_for_acks(writer, 5 * SECOND));
    uint8_t r7[16];
    for (int i = 0; i < 250 && ferrodds_lookup_instance(reader, READING_42, sizeof READING_42, found) != 1; i++) {
        nanosleep(&(struct timespec){0, 20000000}, NULL);
    }
    CHECK(OK(ferrodds_lookup_instance(reader, READING_7, sizeof READING_7, r7)) == 1);
    n = OK(ferrodds_read_instance(reader, inst, 4, 0, r7));
    CHECK(n == 2 && inst[0].data[4] == 7 && inst[1].data[4] == 7);
    CHECK(memcmp(inst[0].info.instance_handle, r7, 16) == 0);
    OK(ferrodds_return_loan(reader, inst, (size_t)n));
    /* Next instance: one instance per call, in handle order, then nothing. */
    n = OK(ferrodds_take_next_instance(reader, inst, 4, 0, NULL));
    uint8_t first[16];
    memcpy(first, inst[0].info.instance_handle, 16);
    int taken = n;
    OK(ferrodds_return_loan(reader, inst, (size_t)n));
    n = OK(ferrodds_take_next_instance(reader, inst, 4, 0, first));
    CHECK(memcmp(inst[0].info.instance_handle, first, 16) != 0);
    taken += n;
    uint8_t second[16];
    memcpy(second, inst[0].info.instance_handle, 16);
    OK(ferrodds_return_loan(reader, inst, (size_t)n));
    CHECK(taken == 3);
    FAILS(ferrodds_take_next_instance(reader, inst, 4, 0, second), FERRODDS_RETCODE_NO_DATA, "no sample");
    FAILS(ferrodds_take_instance(reader, inst, 4, 0, NULL), FERRODDS_RETCODE_BAD_PARAMETER,
          "handle is a null pointer");
    FAILS(ferrodds_lookup_instance(topic, READING_7, sizeof READING_7, found),
          FERRODDS_RETCODE_BAD_PARAMETER, "not a writer or reader");
    FAILS(ferrodds_register_instance(writer, READING_7, 3, h7), FERRODDS_RETCODE_BAD_PARAMETER,
          "not a sample of the writer's type");
    OK(ferrodds_dispose_instance(writer, h7));
    OK(ferrodds_unregister_instance(writer, h42));
    CHECK(ferrodds_unregister_instance(writer, nil) < 0);

    /* DCPS get_datareaders: a subscriber with GROUP ordered access lists its readers, one
     * entry per sample, in the order its publisher wrote them across topics. */
    ferrodds_qos_t *group = ferrodds_create_qos();
    OK(ferrodds_qset_reliability(group, FERRODDS_RELIABILITY_RELIABLE, SECOND));
    OK(ferrodds_qset_history(group, FERRODDS_HISTORY_KEEP_ALL, 0));
    const char *grouped[1] = {"c-api-group"};
    OK(ferrodds_qset_partition(group, 1, grouped));
    OK(ferrodds_qset_presentation(group, FERRODDS_PRESENTATION_GROUP, 0, 1));
    ferrodds_entity_t gpub = OK(ferrodds_create_publisher(participant, group));
    ferrodds_entity_t gsub = OK(ferrodds_create_subscriber(participant, group));
    ferrodds_entity_t topic2 = OK(ferrodds_create_topic(participant, "c_api_readings_2", type));
    ferrodds_entity_t w1 = OK(ferrodds_create_writer(gpub, topic, group));
    ferrodds_entity_t w2 = OK(ferrodds_create_writer(gpub, topic2, group));
    ferrodds_entity_t r1 = OK(ferrodds_create_reader(gsub, topic, group));
    ferrodds_entity_t r2 = OK(ferrodds_create_reader(gsub, topic2, group));
    OK(ferrodds_wait_for_matched(w1, 1, 5 * SECOND));
    OK(ferrodds_wait_for_matched(w2, 1, 5 * SECOND));
    OK(ferrodds_write(w2, READING_7, sizeof READING_7));
    OK(ferrodds_write(w1, READING_7, sizeof READING_7));
    OK(ferrodds_write(w2, READING_7, sizeof READING_7));
    OK(ferrodds_wait_for_acks(w1, 5 * SECOND));
    OK(ferrodds_wait_for_acks(w2, 5 * SECOND));
    OK(ferrodds_begin_coherent(gsub));
    ferrodds_entity_t order[8] = {0};
    CHECK(OK(ferrodds_get_datareaders(gsub, 0, order, 8)) == 3);
    CHECK(order[0] == r2 && order[1] == r1 && order[2] == r2);
    /* Room for one: the count says how many there are. */
    CHECK(OK(ferrodds_get_datareaders(gsub, 0, order, 1)) == 3);
    CHECK(OK(ferrodds_get_datareaders(gsub, FERRODDS_NOT_READ_SAMPLE_STATE, NULL, 0)) == 3);
    OK(ferrodds_end_coherent(gsub));
    FAILS(ferrodds_get_datareaders(gpub, 0, order, 8), FERRODDS_RETCODE_BAD_PARAMETER,
          "not a subscriber");
    ferrodds_delete_qos(group);

    OK(ferrodds_delete(writer));
    FAILS(ferrodds_write(writer, READING_7, sizeof READING_7), FERRODDS_RETCODE_ALREADY_DELETED,
          "was deleted");
    FAILS(ferrodds_delete(writer), FERRODDS_RETCODE_ALREADY_DELETED, "was deleted");

    /* Deleting the participant deletes what was made from it. */
    ferrodds_delete_qos(qos);
    OK(ferrodds_delete(participant));
    FAILS(ferrodds_take(reader, two, 4, 0), FERRODDS_RETCODE_ALREADY_DELETED, "was deleted");
    FAILS(ferrodds_waitset_wait(ws, &arg, 1, 0), FERRODDS_RETCODE_ALREADY_DELETED, "was deleted");
    OK(ferrodds_delete(type));
    OK(ferrodds_delete(again));

    printf("api_test: %d checks passed\n", checks);
    return 0;
}
