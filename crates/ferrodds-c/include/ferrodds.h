/* FerroDDS's C API. Generated from crates/ferrodds-c by cbindgen: do not edit.
 *
 * Entities are named by handles (ferrodds_entity_t, positive). Every function returns a
 * negative FERRODDS_RETCODE_* on failure; ferrodds_last_error() then says what was wrong.
 * Link with -lferrodds_c. docs/c.md is the guide. */

#ifndef FERRODDS_H
#define FERRODDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// An infinite duration.
#define FERRODDS_INFINITY 9223372036854775807

// No limit (resource limits, history depth).
#define FERRODDS_LENGTH_UNLIMITED -1

// RELIABILITY kind: best effort.
#define FERRODDS_RELIABILITY_BEST_EFFORT 0

// RELIABILITY kind: reliable.
#define FERRODDS_RELIABILITY_RELIABLE 1

// DURABILITY kind: volatile.
#define FERRODDS_DURABILITY_VOLATILE 0

// DURABILITY kind: transient local.
#define FERRODDS_DURABILITY_TRANSIENT_LOCAL 1

// DURABILITY kind: transient.
#define FERRODDS_DURABILITY_TRANSIENT 2

// DURABILITY kind: persistent.
#define FERRODDS_DURABILITY_PERSISTENT 3

// HISTORY kind: keep last `depth`.
#define FERRODDS_HISTORY_KEEP_LAST 0

// HISTORY kind: keep all.
#define FERRODDS_HISTORY_KEEP_ALL 1

// OWNERSHIP kind: shared.
#define FERRODDS_OWNERSHIP_SHARED 0

// OWNERSHIP kind: exclusive.
#define FERRODDS_OWNERSHIP_EXCLUSIVE 1

// LIVELINESS kind: automatic.
#define FERRODDS_LIVELINESS_AUTOMATIC 0

// LIVELINESS kind: manual by participant.
#define FERRODDS_LIVELINESS_MANUAL_BY_PARTICIPANT 1

// LIVELINESS kind: manual by topic.
#define FERRODDS_LIVELINESS_MANUAL_BY_TOPIC 2

// DESTINATION_ORDER kind: by reception timestamp.
#define FERRODDS_DESTINATIONORDER_BY_RECEPTION_TIMESTAMP 0

// DESTINATION_ORDER kind: by source timestamp.
#define FERRODDS_DESTINATIONORDER_BY_SOURCE_TIMESTAMP 1

// PRESENTATION access scope: instance.
#define FERRODDS_PRESENTATION_INSTANCE 0

// PRESENTATION access scope: topic.
#define FERRODDS_PRESENTATION_TOPIC 1

// PRESENTATION access scope: group.
#define FERRODDS_PRESENTATION_GROUP 2

// DATA_REPRESENTATION: XCDR version 1.
#define FERRODDS_DATA_REPRESENTATION_XCDR1 0

// DATA_REPRESENTATION: XCDR version 2.
#define FERRODDS_DATA_REPRESENTATION_XCDR2 2

// Sample state: read before.
#define FERRODDS_READ_SAMPLE_STATE 1

// Sample state: not read before.
#define FERRODDS_NOT_READ_SAMPLE_STATE 2

// Any sample state.
#define FERRODDS_ANY_SAMPLE_STATE 3

// View state: the instance is new to the reader.
#define FERRODDS_NEW_VIEW_STATE 4

// View state: the instance was seen before.
#define FERRODDS_NOT_NEW_VIEW_STATE 8

// Any view state.
#define FERRODDS_ANY_VIEW_STATE 12

// Instance state: alive.
#define FERRODDS_ALIVE_INSTANCE_STATE 16

// Instance state: disposed.
#define FERRODDS_NOT_ALIVE_DISPOSED_INSTANCE_STATE 32

// Instance state: no writers left.
#define FERRODDS_NOT_ALIVE_NO_WRITERS_INSTANCE_STATE 64

// Any instance state.
#define FERRODDS_ANY_INSTANCE_STATE 112

// Any sample, view and instance state (also what a mask of 0 means).
#define FERRODDS_ANY_STATE 127

// INCONSISTENT_TOPIC, of a topic.
#define FERRODDS_INCONSISTENT_TOPIC_STATUS 1

// OFFERED_DEADLINE_MISSED, of a writer.
#define FERRODDS_OFFERED_DEADLINE_MISSED_STATUS 2

// REQUESTED_DEADLINE_MISSED, of a reader.
#define FERRODDS_REQUESTED_DEADLINE_MISSED_STATUS 4

// OFFERED_INCOMPATIBLE_QOS, of a writer.
#define FERRODDS_OFFERED_INCOMPATIBLE_QOS_STATUS 32

// REQUESTED_INCOMPATIBLE_QOS, of a reader.
#define FERRODDS_REQUESTED_INCOMPATIBLE_QOS_STATUS 64

// SAMPLE_LOST, of a reader.
#define FERRODDS_SAMPLE_LOST_STATUS 128

// SAMPLE_REJECTED, of a reader.
#define FERRODDS_SAMPLE_REJECTED_STATUS 256

// DATA_ON_READERS, of a subscriber.
#define FERRODDS_DATA_ON_READERS_STATUS 512

// DATA_AVAILABLE, of a reader.
#define FERRODDS_DATA_AVAILABLE_STATUS 1024

// LIVELINESS_LOST, of a writer.
#define FERRODDS_LIVELINESS_LOST_STATUS 2048

// LIVELINESS_CHANGED, of a reader.
#define FERRODDS_LIVELINESS_CHANGED_STATUS 4096

// PUBLICATION_MATCHED, of a writer.
#define FERRODDS_PUBLICATION_MATCHED_STATUS 8192

// SUBSCRIPTION_MATCHED, of a reader.
#define FERRODDS_SUBSCRIPTION_MATCHED_STATUS 16384

// QoS policies to create an entity with (opaque: made by [`ferrodds_create_qos`]).
typedef struct ferrodds_qos_t ferrodds_qos_t;

// An entity's handle (positive), or a negative return code where a call returns one.
typedef int32_t ferrodds_entity_t;

// A return code: zero or a count on success, one of the negative `FERRODDS_RETCODE_*` on
// failure.
typedef int32_t ferrodds_return_t;

// A sample's information (DCPS SampleInfo).
typedef struct {
  // `FERRODDS_READ_SAMPLE_STATE` or `FERRODDS_NOT_READ_SAMPLE_STATE`.
  uint32_t sample_state;
  // `FERRODDS_NEW_VIEW_STATE` or `FERRODDS_NOT_NEW_VIEW_STATE`.
  uint32_t view_state;
  // One of the `FERRODDS_*_INSTANCE_STATE`.
  uint32_t instance_state;
  // False for a sample that reports an instance state change only: its data is the key.
  bool valid_data;
  // When the writer wrote it, nanoseconds since 1970; -1 when it did not say.
  int64_t source_timestamp_ns;
  // The instance (its key hash).
  uint8_t instance_handle[16];
  // The writer (its GUID).
  uint8_t publication_handle[16];
  // The writer's sequence number of the sample.
  int64_t sequence_number;
} ferrodds_sample_info_t;

// A sample taken or read: its bytes, lent by the reader, and its information.
typedef struct {
  // The serialized sample (encapsulation header first), or the JSON text (NUL-terminated;
  // `size` leaves the NUL out). For a sample without valid data, its key. Null when
  // empty (a dispose that came as a key hash only).
  const uint8_t *data;
  // Bytes at `data`.
  size_t size;
  // Its information.
  ferrodds_sample_info_t info;
} ferrodds_sample_t;

// PUBLICATION_MATCHED of a writer, or SUBSCRIPTION_MATCHED of a reader.
typedef struct {
  // Readers (writers) matched ever.
  uint64_t total_count;
  // Change of `total_count` since this status was last read (a read resets it).
  int64_t total_count_change;
  // Readers (writers) matched now.
  uint64_t current_count;
  // Change of `current_count` since this status was last read.
  int64_t current_count_change;
  // The GUID of the last one that matched or left (zeros: none yet).
  uint8_t last_handle[16];
} ferrodds_matched_status_t;

// LIVELINESS_CHANGED of a reader.
typedef struct {
  // Matched writers alive now.
  uint32_t alive_count;
  // Matched writers not alive now.
  uint32_t not_alive_count;
  // Change of `alive_count` since this status was last read (a read resets it).
  int32_t alive_count_change;
  // Change of `not_alive_count` since this status was last read.
  int32_t not_alive_count_change;
  // The GUID of the last writer whose liveliness changed (zeros: none yet).
  uint8_t last_publication_handle[16];
} ferrodds_liveliness_changed_status_t;

// The total-count statuses: LIVELINESS_LOST, OFFERED/REQUESTED_DEADLINE_MISSED,
// OFFERED/REQUESTED_INCOMPATIBLE_QOS, SAMPLE_LOST, SAMPLE_REJECTED.
typedef struct {
  // Times it happened.
  uint64_t total_count;
  // Change of `total_count` since this status was last read (a read resets it).
  int64_t total_count_change;
  // Deadlines: the instance last missed; other statuses: zeros.
  uint8_t last_instance_handle[16];
  // Incompatible QoS: the id of the policy last found incompatible (DDS
  // `QosPolicyId_t`); sample rejected: the last reason (1 instances, 2 samples, 3
  // samples per instance limit, 4 undecodable); 0 otherwise.
  int32_t last_reason;
} ferrodds_count_status_t;

// A listener: called with the entity whose status changed (for a publisher's,
// subscriber's or participant's listener, the writer or reader, or 0 when it is not one
// made through this API), the status's `FERRODDS_*_STATUS` bit, and the `arg` given with
// it. It runs on a FerroDDS thread (or the thread of the call that caused the change),
// with no lock held: it may call this API, and should return soon.
typedef void (*ferrodds_listener_fn)(ferrodds_entity_t entity, uint32_t status, void *arg);

// Success.
#define FERRODDS_RETCODE_OK 0

// A failure no other code names.
#define FERRODDS_RETCODE_ERROR -1

// The operation is not supported.
#define FERRODDS_RETCODE_UNSUPPORTED -2

// An argument is invalid: a null pointer, a handle of the wrong kind, bytes that are not a
// sample of the type.
#define FERRODDS_RETCODE_BAD_PARAMETER -3

// The call does not fit the entities' state: a topic of another participant, a wait set
// with nothing attached, an entity attached twice.
#define FERRODDS_RETCODE_PRECONDITION_NOT_MET -4

// A resource limit was reached (a history full past its blocking time counts as timeout).
#define FERRODDS_RETCODE_OUT_OF_RESOURCES -5

// `ferrodds_set_qos` would change a policy that may not change once the entity exists;
// nothing changed.
#define FERRODDS_RETCODE_IMMUTABLE_POLICY -7

// The handle names an entity that was deleted.
#define FERRODDS_RETCODE_ALREADY_DELETED -9

// The operation did not complete in its time.
#define FERRODDS_RETCODE_TIMEOUT -10

// Nothing to take or read.
#define FERRODDS_RETCODE_NO_DATA -11

// The caller's buffer is too small; the size needed was written where the call says.
#define FERRODDS_RETCODE_BUFFER_TOO_SMALL -30

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

// A participant in domain `domain_id`, configured by `FERRODDS_CONFIG` as every FerroDDS
// participant is. Of `qos` (may be null) it takes USER_DATA (`ferrodds_qset_userdata`),
// announced in SPDP; other policies are a writer's or reader's and ignored here.
//
// # Safety
// `qos` is null or a live QoS.
ferrodds_entity_t ferrodds_create_participant(uint32_t domain_id, const ferrodds_qos_t *qos);

// A publisher of `participant` with the partition and PRESENTATION of `qos` (null:
// defaults).
//
// # Safety
// `qos` is null or a live QoS.
ferrodds_entity_t ferrodds_create_publisher(ferrodds_entity_t participant, const ferrodds_qos_t *qos);

// A subscriber of `participant` with the partition and PRESENTATION of `qos` (null:
// defaults).
//
// # Safety
// `qos` is null or a live QoS.
ferrodds_entity_t ferrodds_create_subscriber(ferrodds_entity_t participant, const ferrodds_qos_t *qos);

// The type `type_name` (`module::Name`) that the IDL text `idl` declares. Topics are
// created with it; delete it with [`ferrodds_delete`] when no topic is to be made of it
// any more (topics keep what they need).
//
// # Safety
// `idl` and `type_name` are null or NUL-terminated strings.
ferrodds_entity_t ferrodds_create_type_from_idl(const char *idl, const char *type_name);

// The type described by `n` serialized COMPLETE TypeObjects (XTypes 7.3.4): the type's
// own first, then those of the types it refers to. Its name is `type_name`, or when null
// the name in the TypeObject.
//
// # Safety
// `objects` and `sizes` are null (with `n` 0) or point at `n` values; each
// `objects[i]` points at `sizes[i]` bytes; `type_name` is null or a NUL-terminated string.
ferrodds_entity_t ferrodds_create_type_from_type_objects(const uint8_t *const *objects, const size_t *sizes, size_t n, const char *type_name);

// Writes TypeObject `index` of type `type` into `buffer` (`capacity` bytes) and its size
// into `*size`: index 0 is the type's own COMPLETE TypeObject, the others those of the
// types it refers to, as [`ferrodds_create_type_from_type_objects`] takes them. Returns
// how many there are; `FERRODDS_RETCODE_BUFFER_TOO_SMALL` (with `*size` the size needed)
// when `capacity` is too small, and nothing written.
//
// # Safety
// `buffer` is null (with `capacity` 0) or points at `capacity` writable bytes; `size` is
// null or points at a writable `size_t`.
ferrodds_return_t ferrodds_get_type_object(ferrodds_entity_t type_, uint32_t index, uint8_t *buffer, size_t capacity, size_t *size);

// Topic `name` of type `type_` in `participant`.
//
// # Safety
// `name` is null or a NUL-terminated string.
ferrodds_entity_t ferrodds_create_topic(ferrodds_entity_t participant, const char *name, ferrodds_entity_t type_);

// A writer of `topic` created from `parent` (a participant or a publisher), with `qos`
// over a writer's defaults (reliable, keep last 1, volatile).
//
// # Safety
// `qos` is null or a live QoS.
ferrodds_entity_t ferrodds_create_writer(ferrodds_entity_t parent, ferrodds_entity_t topic, const ferrodds_qos_t *qos);

// A reader of `topic` created from `parent` (a participant or a subscriber), with `qos`
// over a reader's defaults (best effort, keep last 1, volatile).
//
// # Safety
// `qos` is null or a live QoS.
ferrodds_entity_t ferrodds_create_reader(ferrodds_entity_t parent, ferrodds_entity_t topic, const ferrodds_qos_t *qos);

// Changes the QoS of `entity` (a writer or reader) to `qos` over a writer's or reader's
// defaults, as at creation: only the policies DDS lets change may differ (deadline,
// latency budget, partition, user/topic/group data, lifespan, ownership strength,
// time-based filter, the data lifecycles). Matches follow: a writer moved into a
// reader's partition matches it, one moved out unmatches. Of a publisher or subscriber,
// the PARTITION of `qos` moves it and every writer or reader it made. Of a participant,
// the USER_DATA of `qos` (none: empty) replaces its own and is announced at once. Returns
// `FERRODDS_RETCODE_IMMUTABLE_POLICY` (naming the policy) when another policy would
// change; nothing changed then. `FERRODDS_RETCODE_UNSUPPORTED` for other entities.
//
// # Safety
// `qos` is null or a live QoS.
ferrodds_return_t ferrodds_set_qos(ferrodds_entity_t entity, const ferrodds_qos_t *qos);

// A reader of `topic` created from `parent` (a participant or a subscriber) that takes
// in only the samples the filter expression `expression` keeps (a content-filtered
// topic's reader: DDS SQL over the type's members, `%n` is `parameters[n]`), with `qos`
// over a reader's defaults.
//
// # Safety
// `qos` is null or a live QoS; `expression` is null or a NUL-terminated string;
// `parameters` is null (with `nparameters` 0) or points at `nparameters` NUL-terminated
// strings.
ferrodds_entity_t ferrodds_create_filtered_reader(ferrodds_entity_t parent, ferrodds_entity_t topic, const ferrodds_qos_t *qos, const char *expression, const char *const *parameters, size_t nparameters);

// Deletes `entity` and every entity created from it (a participant's publishers,
// subscribers, topics, writers, readers, wait sets and conditions; a reader's
// conditions and lent samples). Handles of deleted entities stay invalid.
ferrodds_return_t ferrodds_delete(ferrodds_entity_t entity);

// The entity `entity` was created from (0 for participants and types).
ferrodds_entity_t ferrodds_get_parent(ferrodds_entity_t entity);

// The participant `entity` belongs to (itself for a participant).
ferrodds_entity_t ferrodds_get_participant(ferrodds_entity_t entity);

// Writes the 16 bytes of `entity`'s GUID (a writer's or reader's) into `guid`.
//
// # Safety
// `guid` is null or points at 16 writable bytes.
ferrodds_return_t ferrodds_get_guid(ferrodds_entity_t entity, uint8_t *guid);

// The data representation `writer` writes, which is the one to serialize its samples in
// (the first of its QoS's DATA_REPRESENTATION, else XCDR1 for a final type and XCDR2
// otherwise): `FERRODDS_DATA_REPRESENTATION_XCDR1` (0) or `_XCDR2` (2).
ferrodds_return_t ferrodds_get_data_representation(ferrodds_entity_t writer);

// DCPS `get_datareaders`: the readers of `subscriber` holding samples that `mask` selects
// (`FERRODDS_*_STATE` bits, as a read condition's; 0 is any), one entry per sample, in the
// order that taking one sample (`ferrodds_take` with that mask and room for one) from each
// in turn reads them in: with ordered access of GROUP scope, one publisher's samples in
// the order it wrote them, whichever of its writers wrote each. Call it between
// `ferrodds_begin_coherent(subscriber)` and `ferrodds_end_coherent(subscriber)` so that no
// sample arrives meanwhile. Writes up to `capacity` handles into `readers` and returns
// how many entries there are (more than `capacity`: call again with more room).
//
// # Safety
// `readers` is null (with `capacity` 0) or points at `capacity` writable handles.
ferrodds_return_t ferrodds_get_datareaders(ferrodds_entity_t subscriber, uint32_t mask, ferrodds_entity_t *readers, size_t capacity);

// Starts a coherent set on `publisher` (PRESENTATION with coherent access), or an access
// on `subscriber` (its readers hold back sets completed meanwhile until
// [`ferrodds_end_coherent`]).
ferrodds_return_t ferrodds_begin_coherent(ferrodds_entity_t publisher);

// Ends the coherent set of `publisher`, or the access of `subscriber`
// ([`ferrodds_begin_coherent`]).
ferrodds_return_t ferrodds_end_coherent(ferrodds_entity_t entity);

// Writes the base64 text of the `size` bytes at `bytes` (no quotes, no terminating NUL) to
// `text`, which has room for `capacity` bytes; returns the text's length, 4 × ⌈size / 3⌉.
//
// # Safety
// `bytes` is null or points at `size` readable bytes; `text` is null or points at
// `capacity` writable bytes, apart from `bytes`.
ferrodds_return_t ferrodds_base64_encode(const uint8_t *bytes, size_t size, uint8_t *text, size_t capacity);

// Decodes the `size` bytes of base64 text at `text` (RFC 4648, padded: groups of four
// digits; no quotes, no whitespace) into `bytes`, which has room for `capacity` bytes;
// returns the number of bytes decoded. `FERRODDS_RETCODE_BAD_PARAMETER` when the text is
// not such base64 or `capacity` is short (nothing is then promised of `bytes`).
//
// # Safety
// `text` is null or points at `size` readable bytes; `bytes` is null or points at
// `capacity` writable bytes, apart from `text`.
ferrodds_return_t ferrodds_base64_decode(const uint8_t *text, size_t size, uint8_t *bytes, size_t capacity);

// Where the JSON string whose content starts at `text` ends: the offset of the first `"`
// or `\\` (an escape) in the `size` bytes at `text`, or `size` when there is neither.
//
// # Safety
// `text` is null or points at `size` readable bytes.
ferrodds_return_t ferrodds_json_string_end(const uint8_t *text, size_t size);

// A new, empty QoS (every policy at its default); delete it with [`ferrodds_delete_qos`].
ferrodds_qos_t *ferrodds_create_qos(void);

// Deletes a QoS made by [`ferrodds_create_qos`]; null is ignored.
//
// # Safety
// `qos` is null or was made by [`ferrodds_create_qos`] and not deleted before.
void ferrodds_delete_qos(ferrodds_qos_t *qos);

// RELIABILITY: `kind` (`FERRODDS_RELIABILITY_*`) and how long a reliable writer may block.
//
// # Safety
// `qos` is null or a live QoS.
ferrodds_return_t ferrodds_qset_reliability(ferrodds_qos_t *qos, int32_t kind, int64_t max_blocking_time_ns);

// DURABILITY: `kind` (`FERRODDS_DURABILITY_*`).
//
// # Safety
// `qos` is null or a live QoS.
ferrodds_return_t ferrodds_qset_durability(ferrodds_qos_t *qos, int32_t kind);

// HISTORY: `kind` (`FERRODDS_HISTORY_*`) and, for keep last, `depth` (at least 1).
//
// # Safety
// `qos` is null or a live QoS.
ferrodds_return_t ferrodds_qset_history(ferrodds_qos_t *qos, int32_t kind, int32_t depth);

// RESOURCE_LIMITS; [`FERRODDS_LENGTH_UNLIMITED`] for no limit.
//
// # Safety
// `qos` is null or a live QoS.
ferrodds_return_t ferrodds_qset_resource_limits(ferrodds_qos_t *qos, int32_t max_samples, int32_t max_instances, int32_t max_samples_per_instance);

// DEADLINE: the period.
//
// # Safety
// `qos` is null or a live QoS.
ferrodds_return_t ferrodds_qset_deadline(ferrodds_qos_t *qos, int64_t period_ns);

// LIFESPAN: how long a sample stays valid.
//
// # Safety
// `qos` is null or a live QoS.
ferrodds_return_t ferrodds_qset_lifespan(ferrodds_qos_t *qos, int64_t duration_ns);

// LIVELINESS: `kind` (`FERRODDS_LIVELINESS_*`) and the lease.
//
// # Safety
// `qos` is null or a live QoS.
ferrodds_return_t ferrodds_qset_liveliness(ferrodds_qos_t *qos, int32_t kind, int64_t lease_duration_ns);

// OWNERSHIP: `kind` (`FERRODDS_OWNERSHIP_*`).
//
// # Safety
// `qos` is null or a live QoS.
ferrodds_return_t ferrodds_qset_ownership(ferrodds_qos_t *qos, int32_t kind);

// OWNERSHIP_STRENGTH of a writer.
//
// # Safety
// `qos` is null or a live QoS.
ferrodds_return_t ferrodds_qset_ownership_strength(ferrodds_qos_t *qos, int32_t strength);

// PARTITION: `n` names (a publisher's or subscriber's; a writer's or reader's own).
//
// # Safety
// `qos` is null or a live QoS; `names` is null (with `n` 0) or points at `n` pointers, each
// null or a NUL-terminated string.
ferrodds_return_t ferrodds_qset_partition(ferrodds_qos_t *qos, uint32_t n, const char *const *names);

// USER_DATA: `sz` bytes at `value` (a participant's, announced in SPDP; a writer's or
// reader's, in SEDP). Cyclone DDS's `dds_qset_userdata`.
//
// # Safety
// `qos` is null or a live QoS; `value` is null (with `sz` 0) or points at `sz` bytes.
ferrodds_return_t ferrodds_qset_userdata(ferrodds_qos_t *qos, const void *value, size_t sz);

// TOPIC_DATA: `sz` bytes at `value` (announced with each writer and reader).
//
// # Safety
// `qos` is null or a live QoS; `value` is null (with `sz` 0) or points at `sz` bytes.
ferrodds_return_t ferrodds_qset_topicdata(ferrodds_qos_t *qos, const void *value, size_t sz);

// GROUP_DATA: `sz` bytes at `value` (announced with each writer and reader).
//
// # Safety
// `qos` is null or a live QoS; `value` is null (with `sz` 0) or points at `sz` bytes.
ferrodds_return_t ferrodds_qset_groupdata(ferrodds_qos_t *qos, const void *value, size_t sz);

// DESTINATION_ORDER: `kind` (`FERRODDS_DESTINATIONORDER_*`).
//
// # Safety
// `qos` is null or a live QoS.
ferrodds_return_t ferrodds_qset_destination_order(ferrodds_qos_t *qos, int32_t kind);

// TIME_BASED_FILTER of a reader: the minimum separation.
//
// # Safety
// `qos` is null or a live QoS.
ferrodds_return_t ferrodds_qset_time_based_filter(ferrodds_qos_t *qos, int64_t minimum_separation_ns);

// DATA_REPRESENTATION: `n` representations (`FERRODDS_DATA_REPRESENTATION_*`); a writer
// uses the first.
//
// # Safety
// `qos` is null or a live QoS; `values` is null (with `n` 0) or points at `n` values.
ferrodds_return_t ferrodds_qset_data_representation(ferrodds_qos_t *qos, uint32_t n, const int16_t *values);

// PRESENTATION of a publisher or subscriber: `access_scope` (`FERRODDS_PRESENTATION_*`).
//
// # Safety
// `qos` is null or a live QoS.
ferrodds_return_t ferrodds_qset_presentation(ferrodds_qos_t *qos, int32_t access_scope, bool coherent_access, bool ordered_access);

// WRITER_DATA_LIFECYCLE: whether unregistering an instance disposes it.
//
// # Safety
// `qos` is null or a live QoS.
ferrodds_return_t ferrodds_qset_writer_data_lifecycle(ferrodds_qos_t *qos, bool autodispose);

// What went wrong in this thread's last call that failed: `"function: message"`, or an
// empty string when none has. The text lives until this thread's next failing call.
const char *ferrodds_last_error(void);

// A short name of return code `code` (`"BAD_PARAMETER"`, …); a static string.
const char *ferrodds_strretcode(ferrodds_return_t code);

// Writes the sample serialized at `data` (`size` bytes, encapsulation header first, in
// the writer's data representation), stamped now. The bytes are copied.
//
// # Safety
// `data` is null or points at `size` readable bytes.
ferrodds_return_t ferrodds_write(ferrodds_entity_t writer, const uint8_t *data, size_t size);

// [`ferrodds_write`] stamped `timestamp_ns` (nanoseconds since 1970).
//
// # Safety
// `data` is null or points at `size` readable bytes.
ferrodds_return_t ferrodds_write_ts(ferrodds_entity_t writer, const uint8_t *data, size_t size, int64_t timestamp_ns);

// Lends `*buffer`, room for `size` bytes, to serialize a sample into (encapsulation header
// first, in the writer's data representation) for [`ferrodds_write_buffer`], which writes
// it without the copy [`ferrodds_write`] makes: the buffer is one the writer's history
// will keep the sample in. The buffer stays lent until written, or given back with
// [`ferrodds_return_buffer`] (or the writer deleted).
//
// # Safety
// `buffer` is null or points at a writable pointer.
ferrodds_return_t ferrodds_request_buffer(ferrodds_entity_t writer, size_t size, uint8_t **buffer);

// Writes the sample serialized in the first `size` bytes of `buffer`, which
// [`ferrodds_request_buffer`] lent, stamped `timestamp_ns` (nanoseconds since 1970), or
// now when it is negative. The buffer is the writer's again, whatever the outcome.
//
// # Safety
// `buffer` is a buffer `writer` lent, whose first `size` bytes the caller wrote.
ferrodds_return_t ferrodds_write_buffer(ferrodds_entity_t writer, uint8_t *buffer, size_t size, int64_t timestamp_ns);

// Gives back the buffer at `buffer` that [`ferrodds_request_buffer`] lent, unwritten
// (`buffer` is only compared, never read).
ferrodds_return_t ferrodds_return_buffer(ferrodds_entity_t writer, uint8_t *buffer);

// Disposes the instance of the sample serialized at `data` (its key members count).
//
// # Safety
// `data` is null or points at `size` readable bytes.
ferrodds_return_t ferrodds_dispose(ferrodds_entity_t writer, const uint8_t *data, size_t size);

// Unregisters the instance of the sample serialized at `data` (its key members count).
//
// # Safety
// `data` is null or points at `size` readable bytes.
ferrodds_return_t ferrodds_unregister(ferrodds_entity_t writer, const uint8_t *data, size_t size);

// Writes the sample the JSON text `json` describes (FerroDDS's JSON view of the type).
//
// # Safety
// `json` is null or a NUL-terminated string.
ferrodds_return_t ferrodds_write_json(ferrodds_entity_t writer, const char *json);

// Disposes the instance of the sample the JSON text `json` describes (its key members
// are enough).
//
// # Safety
// `json` is null or a NUL-terminated string.
ferrodds_return_t ferrodds_dispose_json(ferrodds_entity_t writer, const char *json);

// Unregisters the instance of the sample the JSON text `json` describes (its key members
// are enough).
//
// # Safety
// `json` is null or a NUL-terminated string.
ferrodds_return_t ferrodds_unregister_json(ferrodds_entity_t writer, const char *json);

// Takes up to `max` samples whose states `mask` selects (`FERRODDS_*_STATE` or'ed, 0 for
// any) into `samples`: returns how many, or `FERRODDS_RETCODE_NO_DATA` when none. Their
// bytes are lent: give them back with [`ferrodds_return_loan`].
//
// # Safety
// `samples` is null (with `max` 0) or points at `max` writable `ferrodds_sample_t`.
ferrodds_return_t ferrodds_take(ferrodds_entity_t reader, ferrodds_sample_t *samples, size_t max, uint32_t mask);

// [`ferrodds_take`], leaving the samples in the reader (marked read).
//
// # Safety
// `samples` is null (with `max` 0) or points at `max` writable `ferrodds_sample_t`.
ferrodds_return_t ferrodds_read(ferrodds_entity_t reader, ferrodds_sample_t *samples, size_t max, uint32_t mask);

// [`ferrodds_take`] with each sample as JSON text (NUL-terminated).
//
// # Safety
// `samples` is null (with `max` 0) or points at `max` writable `ferrodds_sample_t`.
ferrodds_return_t ferrodds_take_json(ferrodds_entity_t reader, ferrodds_sample_t *samples, size_t max, uint32_t mask);

// [`ferrodds_read`] with each sample as JSON text (NUL-terminated).
//
// # Safety
// `samples` is null (with `max` 0) or points at `max` writable `ferrodds_sample_t`.
ferrodds_return_t ferrodds_read_json(ferrodds_entity_t reader, ferrodds_sample_t *samples, size_t max, uint32_t mask);

// [`ferrodds_take`] of the samples of one instance: `handle` (16 bytes, as a sample's
// `info.instance_handle` or [`ferrodds_lookup_instance`] gives it). DCPS `take_instance`.
//
// # Safety
// `samples` is null (with `max` 0) or points at `max` writable `ferrodds_sample_t`;
// `handle` is null or points at 16 readable bytes.
ferrodds_return_t ferrodds_take_instance(ferrodds_entity_t reader, ferrodds_sample_t *samples, size_t max, uint32_t mask, const uint8_t *handle);

// [`ferrodds_take_instance`], leaving the samples in the reader (marked read).
//
// # Safety
// As [`ferrodds_take_instance`].
ferrodds_return_t ferrodds_read_instance(ferrodds_entity_t reader, ferrodds_sample_t *samples, size_t max, uint32_t mask, const uint8_t *handle);

// [`ferrodds_take`] of the samples `mask` selects of the first instance after `previous`
// (16 bytes; null: from the first) that has any, in instance-handle order: DCPS
// `take_next_instance`. Calling it again with the instance of what it returned walks the
// instances one at a time; `FERRODDS_RETCODE_NO_DATA` at the end.
//
// # Safety
// `samples` is null (with `max` 0) or points at `max` writable `ferrodds_sample_t`;
// `previous` is null or points at 16 readable bytes.
ferrodds_return_t ferrodds_take_next_instance(ferrodds_entity_t reader, ferrodds_sample_t *samples, size_t max, uint32_t mask, const uint8_t *previous);

// [`ferrodds_take_next_instance`], leaving the samples in the reader (marked read).
//
// # Safety
// As [`ferrodds_take_next_instance`].
ferrodds_return_t ferrodds_read_next_instance(ferrodds_entity_t reader, ferrodds_sample_t *samples, size_t max, uint32_t mask, const uint8_t *previous);

// Registers the instance of the sample serialized at `data` (its key members count) with
// `writer` and writes its handle (16 bytes) to `handle`: DCPS `register_instance`.
//
// # Safety
// `data` is null or points at `size` readable bytes; `handle` is null or points at 16
// writable bytes.
ferrodds_return_t ferrodds_register_instance(ferrodds_entity_t writer, const uint8_t *data, size_t size, uint8_t *handle);

// The instance of the sample serialized at `data` as `entity` (a writer or a reader) knows
// it: writes its handle to `handle` and returns 1, or returns 0 (and writes zeros) when
// the entity holds no such instance. DCPS `lookup_instance`.
//
// # Safety
// `data` is null or points at `size` readable bytes; `handle` is null or points at 16
// writable bytes.
ferrodds_return_t ferrodds_lookup_instance(ferrodds_entity_t entity, const uint8_t *data, size_t size, uint8_t *handle);

// Unregisters the instance `handle` (16 bytes, from [`ferrodds_register_instance`] or
// [`ferrodds_lookup_instance`]) of `writer`: DCPS `unregister_instance` by handle.
//
// # Safety
// `handle` is null or points at 16 readable bytes.
ferrodds_return_t ferrodds_unregister_instance(ferrodds_entity_t writer, const uint8_t *handle);

// Disposes the instance `handle` of `writer`: DCPS `dispose` by handle.
//
// # Safety
// `handle` is null or points at 16 readable bytes.
ferrodds_return_t ferrodds_dispose_instance(ferrodds_entity_t writer, const uint8_t *handle);

// Gives back the bytes of `n` samples taken or read from `reader`; each one's `data` is
// set to null. A sample whose `data` is null is skipped. Data `reader` did not lend (or
// lent and got back already) is `FERRODDS_RETCODE_BAD_PARAMETER`, after the others are
// given back.
//
// # Safety
// `samples` is null (with `n` 0) or points at `n` writable `ferrodds_sample_t`.
ferrodds_return_t ferrodds_return_loan(ferrodds_entity_t reader, ferrodds_sample_t *samples, size_t n);

// Writes `entity`'s PUBLICATION_MATCHED (a writer) or SUBSCRIPTION_MATCHED (a reader)
// into `status`.
//
// # Safety
// `status` is null or points at a writable `ferrodds_matched_status_t`.
ferrodds_return_t ferrodds_get_matched_status(ferrodds_entity_t entity, ferrodds_matched_status_t *status);

// Writes `reader`'s LIVELINESS_CHANGED into `status`.
//
// # Safety
// `status` is null or points at a writable `ferrodds_liveliness_changed_status_t`.
ferrodds_return_t ferrodds_get_liveliness_changed_status(ferrodds_entity_t reader, ferrodds_liveliness_changed_status_t *status);

// Writes the count status `kind` (one `FERRODDS_*_STATUS` bit: LIVELINESS_LOST,
// OFFERED/REQUESTED_DEADLINE_MISSED, OFFERED/REQUESTED_INCOMPATIBLE_QOS, SAMPLE_LOST,
// SAMPLE_REJECTED of a writer or reader; INCONSISTENT_TOPIC of a topic) of `entity` into
// `status`; a status the entity does not have is `FERRODDS_RETCODE_BAD_PARAMETER`.
//
// # Safety
// `status` is null or points at a writable `ferrodds_count_status_t`.
ferrodds_return_t ferrodds_get_count_status(ferrodds_entity_t entity, uint32_t kind, ferrodds_count_status_t *status);

// Sets the listener of `entity` for the statuses in `mask` (`FERRODDS_*_STATUS` or'ed):
// `listener` is called with `arg` when one of them changes. A writer's or reader's
// listener hears of its own statuses (a topic's: INCONSISTENT_TOPIC); a publisher's,
// subscriber's or participant's of
// those of its writers and readers that have no listener for it (DATA_ON_READERS before
// DATA_AVAILABLE). A null `listener` or a 0 `mask` removes it.
ferrodds_return_t ferrodds_set_listener(ferrodds_entity_t entity, uint32_t mask, ferrodds_listener_fn listener, void *arg);

// Asserts the liveliness of `entity`: a MANUAL_BY_TOPIC writer's, or a participant's
// (its MANUAL_BY_PARTICIPANT writers).
ferrodds_return_t ferrodds_assert_liveliness(ferrodds_entity_t entity);

// A read condition on `reader`: it holds while samples whose states `mask` selects
// (`FERRODDS_*_STATE` or'ed, 0 for any) are waiting. Deleted with the reader.
ferrodds_entity_t ferrodds_create_readcondition(ferrodds_entity_t reader, uint32_t mask);

// A query condition on `reader`: it holds while samples whose states `mask` selects and
// that the filter expression `expression` keeps are waiting (DDS SQL over the type's
// members; `%n` is `parameters[n]`, `nparameters` of them). Taking or reading through it
// hands out only those. Deleted with the reader.
//
// # Safety
// `expression` is null or a NUL-terminated string; `parameters` is null (with
// `nparameters` 0) or points at `nparameters` NUL-terminated strings.
ferrodds_entity_t ferrodds_create_querycondition(ferrodds_entity_t reader, uint32_t mask, const char *expression, const char *const *parameters, size_t nparameters);

// A status condition of `entity` (a writer or reader): it holds while one of the
// statuses in `mask` (`FERRODDS_*_STATUS` or'ed) changed since the application last read
// it (`ferrodds_get_*_status`; DATA_AVAILABLE: while unread samples wait). Deleted with
// the entity.
ferrodds_entity_t ferrodds_create_statuscondition(ferrodds_entity_t entity, uint32_t mask);

// A wait set for the readers and read conditions of `participant`.
ferrodds_entity_t ferrodds_create_waitset(ferrodds_entity_t participant);

// Attaches `entity` to `waitset`: a read condition, or a reader (which then triggers
// when it holds samples not read yet: its DATA_AVAILABLE). `arg` is what
// [`ferrodds_waitset_wait`] hands back for it. Both must be of the wait set's participant.
ferrodds_return_t ferrodds_waitset_attach(ferrodds_entity_t waitset, ferrodds_entity_t entity, ptrdiff_t arg);

// Detaches `entity` from `waitset`.
ferrodds_return_t ferrodds_waitset_detach(ferrodds_entity_t waitset, ferrodds_entity_t entity);

// Waits up to `timeout_ns` (`FERRODDS_INFINITY`: without end) for an attached condition
// to hold. Returns how many hold (0 on timeout) and writes the `arg` of the first
// `nargs` of them into `args`. Conditions of entities deleted meanwhile never hold.
//
// # Safety
// `args` is null (with `nargs` 0) or points at `nargs` writable values.
ferrodds_return_t ferrodds_waitset_wait(ferrodds_entity_t waitset, ptrdiff_t *args, size_t nargs, int64_t timeout_ns);

// Waits up to `timeout_ns` until `entity` (a writer or reader) has matched at least
// `count` readers or writers; `FERRODDS_RETCODE_TIMEOUT` when it has not.
ferrodds_return_t ferrodds_wait_for_matched(ferrodds_entity_t entity, uint32_t count, int64_t timeout_ns);

// Waits up to `timeout_ns` until every matched reliable reader acknowledged what
// `writer` wrote; `FERRODDS_RETCODE_TIMEOUT` when not.
ferrodds_return_t ferrodds_wait_for_acks(ferrodds_entity_t writer, int64_t timeout_ns);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* FERRODDS_H */
