//! Samples across the boundary: written as serialized bytes (encapsulation header first,
//! XCDR1 or XCDR2 as the writer's data representation says) or as JSON text (FerroDDS's
//! JSON view, docs/serialization.md); read and taken as the same, lent by the reader.
//!
//! Ownership of taken samples: each `ferrodds_sample_t::data` is the reader's memory, lent
//! until [`ferrodds_return_loan`] gives it back (or the reader is deleted). The reader
//! keeps every lent buffer by its address, so that giving back a pointer it did not lend,
//! or one twice, is an error rather than a double free.

use std::ffi::c_char;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ferrodds::dynamic::{deserialize, DynamicValue, JsonTextError};
use std::sync::Arc;

use ferrodds::{
    DynamicReader, DynamicWriter, FilterExpression, InstanceHandle, InstanceState, Sample,
    SampleInfo, SampleState, Selection, SerializedBuffer, ViewState,
};

use crate::ptr;
use crate::registry::{ferrodds_entity_t, registry, wrong_kind, Entity};
use crate::retcode::{
    call, ferrodds_return_t, Fail, FERRODDS_RETCODE_NO_DATA, FERRODDS_RETCODE_OK,
    FERRODDS_RETCODE_UNSUPPORTED,
};

/// Sample state: read before.
pub const FERRODDS_READ_SAMPLE_STATE: u32 = 1;
/// Sample state: not read before.
pub const FERRODDS_NOT_READ_SAMPLE_STATE: u32 = 2;
/// Any sample state.
pub const FERRODDS_ANY_SAMPLE_STATE: u32 = 3;
/// View state: the instance is new to the reader.
pub const FERRODDS_NEW_VIEW_STATE: u32 = 4;
/// View state: the instance was seen before.
pub const FERRODDS_NOT_NEW_VIEW_STATE: u32 = 8;
/// Any view state.
pub const FERRODDS_ANY_VIEW_STATE: u32 = 12;
/// Instance state: alive.
pub const FERRODDS_ALIVE_INSTANCE_STATE: u32 = 16;
/// Instance state: disposed.
pub const FERRODDS_NOT_ALIVE_DISPOSED_INSTANCE_STATE: u32 = 32;
/// Instance state: no writers left.
pub const FERRODDS_NOT_ALIVE_NO_WRITERS_INSTANCE_STATE: u32 = 64;
/// Any instance state.
pub const FERRODDS_ANY_INSTANCE_STATE: u32 = 112;
/// Any sample, view and instance state (also what a mask of 0 means).
pub const FERRODDS_ANY_STATE: u32 = 127;

/// A sample's information (DCPS SampleInfo).
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ferrodds_sample_info_t {
    /// `FERRODDS_READ_SAMPLE_STATE` or `FERRODDS_NOT_READ_SAMPLE_STATE`.
    pub sample_state: u32,
    /// `FERRODDS_NEW_VIEW_STATE` or `FERRODDS_NOT_NEW_VIEW_STATE`.
    pub view_state: u32,
    /// One of the `FERRODDS_*_INSTANCE_STATE`.
    pub instance_state: u32,
    /// False for a sample that reports an instance state change only: its data is the key.
    pub valid_data: bool,
    /// When the writer wrote it, nanoseconds since 1970; -1 when it did not say.
    pub source_timestamp_ns: i64,
    /// The instance (its key hash).
    pub instance_handle: [u8; 16],
    /// The writer (its GUID).
    pub publication_handle: [u8; 16],
    /// The writer's sequence number of the sample.
    pub sequence_number: i64,
}

/// A sample taken or read: its bytes, lent by the reader, and its information.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ferrodds_sample_t {
    /// The serialized sample (encapsulation header first), or the JSON text (NUL-terminated;
    /// `size` leaves the NUL out). For a sample without valid data, its key. Null when
    /// empty (a dispose that came as a key hash only).
    pub data: *const u8,
    /// Bytes at `data`.
    pub size: usize,
    /// Its information.
    pub info: ferrodds_sample_info_t,
}

impl Default for ferrodds_sample_t {
    fn default() -> Self {
        ferrodds_sample_t {
            data: std::ptr::null(),
            size: 0,
            info: info(&SampleInfo::default_for_c()),
        }
    }
}

trait DefaultInfo {
    fn default_for_c() -> Self;
}

impl DefaultInfo for SampleInfo {
    fn default_for_c() -> SampleInfo {
        SampleInfo {
            sample_state: SampleState::NotRead,
            view_state: ViewState::New,
            instance_state: InstanceState::Alive,
            valid_data: false,
            source_timestamp: None,
            instance_handle: ferrodds::InstanceHandle::NIL,
            publication_handle: ferrodds::InstanceHandle::NIL,
            sequence_number: 0,
        }
    }
}

fn info(i: &SampleInfo) -> ferrodds_sample_info_t {
    ferrodds_sample_info_t {
        sample_state: i.sample_state.mask(),
        view_state: i.view_state.mask() << 2,
        instance_state: i.instance_state.mask() << 4,
        valid_data: i.valid_data,
        source_timestamp_ns: i
            .source_timestamp
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .and_then(|d| i64::try_from(d.as_nanos()).ok())
            .unwrap_or(-1),
        instance_handle: i.instance_handle.0,
        publication_handle: i.publication_handle.0,
        sequence_number: i.sequence_number,
    }
}

/// The selection a state mask (`FERRODDS_*_STATE` or'ed; 0: any) makes.
pub(crate) fn selection(mask: u32) -> Result<Selection, Fail> {
    if mask & !FERRODDS_ANY_STATE != 0 {
        return Err(Fail::bad(format!(
            "state mask 0x{mask:x} has bits beyond FERRODDS_ANY_STATE (0x7f)"
        )));
    }
    let any_if_none = |bits: u32, all: u32| if bits == 0 { all } else { bits };
    Ok(Selection {
        sample_states: any_if_none(mask & 3, 3),
        view_states: any_if_none((mask >> 2) & 3, 3),
        instance_states: any_if_none((mask >> 4) & 7, 7),
        instance: None,
    })
}

fn writer(handle: ferrodds_entity_t) -> Result<DynamicWriter, Fail> {
    match registry().get(handle)? {
        Entity::Writer(w) => Ok(w.clone()),
        e => Err(wrong_kind(handle, e, "writer")),
    }
}

/// Where samples are taken from: a reader, or a read or query condition of one.
struct Source {
    /// The reader's handle (its entry keeps the loans).
    reader: ferrodds_entity_t,
    r: DynamicReader,
    selection: Selection,
    query: Option<Arc<FilterExpression>>,
}

/// What `handle` takes from, with `mask`'s selection (a condition's is narrowed by it).
fn source(handle: ferrodds_entity_t, mask: u32) -> Result<Source, Fail> {
    let asked = selection(mask)?;
    let mut reg = registry();
    let entry = reg.entry(handle)?;
    let (r, own, query) = match &entry.entity {
        Entity::Reader(r) => (r.clone(), None, None),
        Entity::ReadCondition(r, s) => (r.clone(), Some(*s), None),
        Entity::QueryCondition(r, s, q) => (r.clone(), Some(*s), Some(Arc::clone(q))),
        e => {
            return Err(wrong_kind(
                handle,
                e,
                "reader, read condition or query condition",
            ))
        }
    };
    let (reader, selection) = match own {
        None => (handle, asked),
        Some(s) => (
            entry.parent,
            Selection {
                sample_states: s.sample_states & asked.sample_states,
                view_states: s.view_states & asked.view_states,
                instance_states: s.instance_states & asked.instance_states,
                instance: None,
            },
        ),
    };
    Ok(Source {
        reader,
        r,
        selection,
        query,
    })
}

fn timestamp(ns: i64) -> Result<SystemTime, Fail> {
    u64::try_from(ns)
        .map(|ns| UNIX_EPOCH + Duration::from_nanos(ns))
        .map_err(|_| Fail::bad(format!("timestamp {ns}: before 1970")))
}

/// How a change is made from what C hands over.
#[derive(Clone, Copy)]
enum Change {
    Write,
    Dispose,
    Unregister,
}

fn change_value(
    w: &DynamicWriter,
    change: Change,
    value: &DynamicValue,
    at: SystemTime,
) -> Result<(), Fail> {
    match change {
        Change::Write => w.write_with_timestamp(value, at)?,
        Change::Dispose => w.dispose(value)?,
        Change::Unregister => w.unregister(value)?,
    }
    Ok(())
}

/// Writes, disposes or unregisters from `size` serialized bytes at `data`.
unsafe fn serialized(
    function: &str,
    handle: ferrodds_entity_t,
    data: *const u8,
    size: usize,
    at: Option<i64>,
    change: Change,
) -> ferrodds_return_t {
    call(function, || {
        // SAFETY: the callers' promise: `size` readable bytes at `data`.
        let bytes = unsafe { ptr::bytes(data, size, "data") }?;
        let w = writer(handle)?;
        let at = at.map_or(Ok(SystemTime::now()), timestamp)?;
        match change {
            // The bytes go out as they are (one copy, into a buffer the writer's history let
            // go), padded to a multiple of 4.
            Change::Write => w.write_serialized_slice(bytes, at)?,
            // Disposes and unregisters are rare: the key is taken from the whole sample.
            _ => {
                let value = sample_of(w.dynamic_type(), bytes, "writer")?;
                change_value(&w, change, &value, at)?;
            }
        }
        Ok(FERRODDS_RETCODE_OK)
    })
}

/// Writes the sample serialized at `data` (`size` bytes, encapsulation header first, in
/// the writer's data representation), stamped now. The bytes are copied.
///
/// # Safety
/// `data` is null or points at `size` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_write(
    writer: ferrodds_entity_t,
    data: *const u8,
    size: usize,
) -> ferrodds_return_t {
    // SAFETY: forwarded promise.
    unsafe { serialized("ferrodds_write", writer, data, size, None, Change::Write) }
}

/// [`ferrodds_write`] stamped `timestamp_ns` (nanoseconds since 1970).
///
/// # Safety
/// `data` is null or points at `size` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_write_ts(
    writer: ferrodds_entity_t,
    data: *const u8,
    size: usize,
    timestamp_ns: i64,
) -> ferrodds_return_t {
    // SAFETY: forwarded promise.
    unsafe {
        serialized(
            "ferrodds_write_ts",
            writer,
            data,
            size,
            Some(timestamp_ns),
            Change::Write,
        )
    }
}

/// The smallest sample: its encapsulation header.
const ENCAPSULATION_HEADER: usize = 4;

/// Lends `*buffer`, room for `size` bytes, to serialize a sample into (encapsulation header
/// first, in the writer's data representation) for [`ferrodds_write_buffer`], which writes
/// it without the copy [`ferrodds_write`] makes: the buffer is one the writer's history
/// will keep the sample in. The buffer stays lent until written, or given back with
/// [`ferrodds_return_buffer`] (or the writer deleted).
///
/// # Safety
/// `buffer` is null or points at a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_request_buffer(
    writer: ferrodds_entity_t,
    size: usize,
    buffer: *mut *mut u8,
) -> ferrodds_return_t {
    call("ferrodds_request_buffer", || {
        // SAFETY: the caller's promise.
        let out = unsafe { ptr::out(buffer, "buffer") }?;
        if size < ENCAPSULATION_HEADER {
            return Err(Fail::bad(format!(
                "size {size}: a sample is at least its {ENCAPSULATION_HEADER}-byte \
                 encapsulation header"
            )));
        }
        let mut reg = registry();
        let entry = reg.entry(writer)?;
        let mut lent = match &entry.entity {
            Entity::Writer(w) => w.serialized_buffer(size),
            e => return Err(wrong_kind(writer, e, "writer")),
        };
        let at = lent.bytes().as_mut_ptr();
        entry.buffers.insert(at as usize, (lent, size));
        *out = at;
        Ok(FERRODDS_RETCODE_OK)
    })
}

/// Takes back the buffer at `data` that `writer` lent, for [`ferrodds_write_buffer`] or
/// [`ferrodds_return_buffer`], with the writer.
fn lent_buffer(
    writer_handle: ferrodds_entity_t,
    data: *mut u8,
) -> Result<(DynamicWriter, SerializedBuffer, usize), Fail> {
    let mut reg = registry();
    let entry = reg.entry(writer_handle)?;
    let w = match &entry.entity {
        Entity::Writer(w) => w.clone(),
        e => return Err(wrong_kind(writer_handle, e, "writer")),
    };
    let (bytes, size) = entry.buffers.remove(&(data as usize)).ok_or_else(|| {
        Fail::bad(format!(
            "buffer {data:p} is not one writer {writer_handle} lent (or it was written or \
             given back already)"
        ))
    })?;
    Ok((w, bytes, size))
}

/// Writes the sample serialized in the first `size` bytes of `buffer`, which
/// [`ferrodds_request_buffer`] lent, stamped `timestamp_ns` (nanoseconds since 1970), or
/// now when it is negative. The buffer is the writer's again, whatever the outcome.
///
/// # Safety
/// `buffer` is a buffer `writer` lent, whose first `size` bytes the caller wrote.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_write_buffer(
    writer: ferrodds_entity_t,
    buffer: *mut u8,
    size: usize,
    timestamp_ns: i64,
) -> ferrodds_return_t {
    call("ferrodds_write_buffer", || {
        let (w, mut lent_buffer, lent) = lent_buffer(writer, buffer)?;
        if size < ENCAPSULATION_HEADER || size > lent {
            return Err(Fail::bad(format!(
                "size {size}: the buffer holds {ENCAPSULATION_HEADER} to {lent} bytes"
            )));
        }
        // SAFETY: `size` is within what was lent (the capacity is at least that), and the
        // caller wrote those bytes.
        unsafe { lent_buffer.bytes().set_len(size) };
        let at = if timestamp_ns < 0 {
            SystemTime::now()
        } else {
            timestamp(timestamp_ns)?
        };
        w.write_serialized_buffer(lent_buffer, at)?;
        Ok(FERRODDS_RETCODE_OK)
    })
}

/// Gives back the buffer at `buffer` that [`ferrodds_request_buffer`] lent, unwritten
/// (`buffer` is only compared, never read).
#[no_mangle]
pub extern "C" fn ferrodds_return_buffer(
    writer: ferrodds_entity_t,
    buffer: *mut u8,
) -> ferrodds_return_t {
    call("ferrodds_return_buffer", || {
        lent_buffer(writer, buffer)?;
        Ok(FERRODDS_RETCODE_OK)
    })
}

/// Disposes the instance of the sample serialized at `data` (its key members count).
///
/// # Safety
/// `data` is null or points at `size` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_dispose(
    writer: ferrodds_entity_t,
    data: *const u8,
    size: usize,
) -> ferrodds_return_t {
    // SAFETY: forwarded promise.
    unsafe {
        serialized(
            "ferrodds_dispose",
            writer,
            data,
            size,
            None,
            Change::Dispose,
        )
    }
}

/// Unregisters the instance of the sample serialized at `data` (its key members count).
///
/// # Safety
/// `data` is null or points at `size` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_unregister(
    writer: ferrodds_entity_t,
    data: *const u8,
    size: usize,
) -> ferrodds_return_t {
    // SAFETY: forwarded promise.
    unsafe {
        serialized(
            "ferrodds_unregister",
            writer,
            data,
            size,
            None,
            Change::Unregister,
        )
    }
}

/// Writes, disposes or unregisters from JSON text.
unsafe fn json(
    function: &str,
    handle: ferrodds_entity_t,
    text: *const c_char,
    change: Change,
) -> ferrodds_return_t {
    call(function, || {
        // SAFETY: the callers' promise: a NUL-terminated string.
        let text = unsafe { ptr::c_str(text, "json") }?;
        let w = writer(handle)?;
        let ty = w.dynamic_type();
        if matches!(change, Change::Write) {
            // The whole sample: read straight from the text (no document in between).
            let value = DynamicValue::from_json_text(ty, text).map_err(|e| match e {
                JsonTextError::Syntax(e) => Fail::bad(format!("json is not JSON: {e}")),
                JsonTextError::Value(e) => {
                    Fail::bad(format!("json is not a sample of the writer's type: {e}"))
                }
            })?;
            change_value(&w, change, &value, SystemTime::now())?;
            return Ok(FERRODDS_RETCODE_OK);
        }
        let mut parsed: serde_json::Value =
            serde_json::from_str(text).map_err(|e| Fail::bad(format!("json is not JSON: {e}")))?;
        // A dispose or unregister names its instance by the key members alone: the others
        // take their defaults.
        let mut whole = DynamicValue::default_of(ty).to_json(ty);
        if let (Some(whole), Some(given)) = (whole.as_object_mut(), parsed.as_object()) {
            whole.extend(given.iter().map(|(k, v)| (k.clone(), v.clone())));
            parsed = serde_json::Value::Object(whole.clone());
        }
        let value = DynamicValue::from_json(ty, &parsed)
            .map_err(|e| Fail::bad(format!("json is not a sample of the writer's type: {e}")))?;
        change_value(&w, change, &value, SystemTime::now())?;
        Ok(FERRODDS_RETCODE_OK)
    })
}

/// Writes the sample the JSON text `json` describes (FerroDDS's JSON view of the type).
///
/// # Safety
/// `json` is null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_write_json(
    writer: ferrodds_entity_t,
    json: *const c_char,
) -> ferrodds_return_t {
    // SAFETY: forwarded promise.
    unsafe { self::json("ferrodds_write_json", writer, json, Change::Write) }
}

/// Disposes the instance of the sample the JSON text `json` describes (its key members
/// are enough).
///
/// # Safety
/// `json` is null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_dispose_json(
    writer: ferrodds_entity_t,
    json: *const c_char,
) -> ferrodds_return_t {
    // SAFETY: forwarded promise.
    unsafe { self::json("ferrodds_dispose_json", writer, json, Change::Dispose) }
}

/// Unregisters the instance of the sample the JSON text `json` describes (its key members
/// are enough).
///
/// # Safety
/// `json` is null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_unregister_json(
    writer: ferrodds_entity_t,
    json: *const c_char,
) -> ferrodds_return_t {
    // SAFETY: forwarded promise.
    unsafe { self::json("ferrodds_unregister_json", writer, json, Change::Unregister) }
}

/// How samples come out of the reader.
#[derive(Clone, Copy, PartialEq)]
enum Form {
    Serialized,
    Json,
}

/// Which instances a take or read looks at.
#[derive(Debug, Clone, Copy)]
enum Which {
    /// Every instance.
    All,
    /// One instance.
    Instance(InstanceHandle),
    /// The first instance after this one (from the first: `None`) that has samples
    /// selected (DCPS `take_next_instance`).
    After(Option<InstanceHandle>),
}

/// The instance handle of 16 bytes at `handle`.
///
/// # Safety
/// `handle` is null or points at 16 readable bytes.
unsafe fn instance_handle(handle: *const u8, what: &str) -> Result<InstanceHandle, Fail> {
    // SAFETY: the caller's promise.
    let bytes = unsafe { ptr::bytes(handle, 16, what) }?;
    let mut h = [0u8; 16];
    h.copy_from_slice(bytes);
    Ok(InstanceHandle(h))
}

/// Takes or reads up to `max` samples into `samples`, lending their bytes.
#[allow(clippy::too_many_arguments)]
unsafe fn collect(
    function: &str,
    handle: ferrodds_entity_t,
    samples: *mut ferrodds_sample_t,
    max: usize,
    mask: u32,
    take: bool,
    form: Form,
    which: Which,
) -> ferrodds_return_t {
    call(function, || {
        // SAFETY: the callers' promise: `max` writable samples.
        let out = unsafe { ptr::out_slice(samples, max, "samples") }?;
        let Source {
            reader,
            r,
            mut selection,
            query,
        } = source(handle, mask)?;
        let max = max.min(i32::MAX as usize);
        let previous = match which {
            Which::All => None,
            Which::Instance(h) => {
                selection.instance = Some(h);
                None
            }
            Which::After(previous) => {
                if query.is_some() {
                    return Err(Fail::new(
                        FERRODDS_RETCODE_UNSUPPORTED,
                        format!("entity {handle} is a query condition: it takes no next instance"),
                    ));
                }
                Some(previous)
            }
        };
        let got: Vec<(Vec<u8>, SampleInfo)> = match form {
            Form::Serialized => {
                let s = match (&query, take, previous) {
                    (_, true, Some(p)) => r.take_serialized_next_instance(max, p, selection),
                    (_, false, Some(p)) => r.read_serialized_next_instance(max, p, selection),
                    (Some(q), true, None) => r.take_serialized_query(max, selection, q),
                    (Some(q), false, None) => r.read_serialized_query(max, selection, q),
                    (None, true, None) => r.take_serialized_selection(max, selection),
                    (None, false, None) => r.read_serialized_selection(max, selection),
                };
                s.into_iter()
                    .map(|s| {
                        let info = s.info;
                        (s.data.or(s.key).unwrap_or_default(), info)
                    })
                    .collect()
            }
            Form::Json => {
                let ty = r.dynamic_type().clone();
                let unshared = |s: Vec<Sample<DynamicValue>>| s.into_iter().map(|s| (s, None));
                let s: Vec<_> = match (&query, take, previous) {
                    // Octets as views into the received payloads, straight into base64 text;
                    // each payload goes back to the reader once its text is made.
                    (None, take, None) => r.collect_shared(max, take, selection),
                    (_, true, Some(p)) => {
                        unshared(r.take_next_instance(max, p, selection)?).collect()
                    }
                    (_, false, Some(p)) => {
                        unshared(r.read_next_instance(max, p, selection)?).collect()
                    }
                    (Some(q), true, None) => unshared(r.take_query(max, selection, q)?).collect(),
                    (Some(q), false, None) => unshared(r.read_query(max, selection, q)?).collect(),
                };
                let mut payloads = Vec::new();
                let texts = s
                    .into_iter()
                    .map(|(s, payload)| {
                        let mut text = String::new();
                        if let Some(v) = s.value() {
                            v.write_json_text(&ty, &mut text);
                        }
                        payloads.extend(payload);
                        let mut text = text.into_bytes();
                        text.push(0);
                        (text, s.info)
                    })
                    .collect();
                // The values are gone: the payloads go back in one call (one lock per take).
                r.return_shared(payloads);
                texts
            }
        };
        if got.is_empty() {
            return Err(Fail::new(
                FERRODDS_RETCODE_NO_DATA,
                "no sample to take or read",
            ));
        }
        let count = got.len();
        let mut reg = registry();
        // The reader may have been deleted meanwhile: then its samples go with it.
        let entry = reg.entry(reader)?;
        for ((bytes, i), slot) in got.into_iter().zip(out.iter_mut()) {
            let mut size = bytes.len();
            if form == Form::Json {
                size -= 1;
            }
            let data = if bytes.is_empty() {
                std::ptr::null()
            } else {
                let p = bytes.as_ptr();
                entry.loans.insert(p as usize, bytes);
                p
            };
            *slot = ferrodds_sample_t {
                data,
                size,
                info: info(&i),
            };
        }
        Ok(i32::try_from(count).unwrap_or(i32::MAX))
    })
}

/// Takes up to `max` samples whose states `mask` selects (`FERRODDS_*_STATE` or'ed, 0 for
/// any) into `samples`: returns how many, or `FERRODDS_RETCODE_NO_DATA` when none. Their
/// bytes are lent: give them back with [`ferrodds_return_loan`].
///
/// # Safety
/// `samples` is null (with `max` 0) or points at `max` writable `ferrodds_sample_t`.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_take(
    reader: ferrodds_entity_t,
    samples: *mut ferrodds_sample_t,
    max: usize,
    mask: u32,
) -> ferrodds_return_t {
    // SAFETY: forwarded promise.
    unsafe {
        collect(
            "ferrodds_take",
            reader,
            samples,
            max,
            mask,
            true,
            Form::Serialized,
            Which::All,
        )
    }
}

/// [`ferrodds_take`], leaving the samples in the reader (marked read).
///
/// # Safety
/// `samples` is null (with `max` 0) or points at `max` writable `ferrodds_sample_t`.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_read(
    reader: ferrodds_entity_t,
    samples: *mut ferrodds_sample_t,
    max: usize,
    mask: u32,
) -> ferrodds_return_t {
    // SAFETY: forwarded promise.
    unsafe {
        collect(
            "ferrodds_read",
            reader,
            samples,
            max,
            mask,
            false,
            Form::Serialized,
            Which::All,
        )
    }
}

/// [`ferrodds_take`] with each sample as JSON text (NUL-terminated).
///
/// # Safety
/// `samples` is null (with `max` 0) or points at `max` writable `ferrodds_sample_t`.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_take_json(
    reader: ferrodds_entity_t,
    samples: *mut ferrodds_sample_t,
    max: usize,
    mask: u32,
) -> ferrodds_return_t {
    // SAFETY: forwarded promise.
    unsafe {
        collect(
            "ferrodds_take_json",
            reader,
            samples,
            max,
            mask,
            true,
            Form::Json,
            Which::All,
        )
    }
}

/// [`ferrodds_read`] with each sample as JSON text (NUL-terminated).
///
/// # Safety
/// `samples` is null (with `max` 0) or points at `max` writable `ferrodds_sample_t`.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_read_json(
    reader: ferrodds_entity_t,
    samples: *mut ferrodds_sample_t,
    max: usize,
    mask: u32,
) -> ferrodds_return_t {
    // SAFETY: forwarded promise.
    unsafe {
        collect(
            "ferrodds_read_json",
            reader,
            samples,
            max,
            mask,
            false,
            Form::Json,
            Which::All,
        )
    }
}

/// [`ferrodds_take`] of the samples of one instance: `handle` (16 bytes, as a sample's
/// `info.instance_handle` or [`ferrodds_lookup_instance`] gives it). DCPS `take_instance`.
///
/// # Safety
/// `samples` is null (with `max` 0) or points at `max` writable `ferrodds_sample_t`;
/// `handle` is null or points at 16 readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_take_instance(
    reader: ferrodds_entity_t,
    samples: *mut ferrodds_sample_t,
    max: usize,
    mask: u32,
    handle: *const u8,
) -> ferrodds_return_t {
    // SAFETY: forwarded promises.
    unsafe {
        by_instance(
            "ferrodds_take_instance",
            reader,
            samples,
            max,
            mask,
            handle,
            true,
        )
    }
}

/// [`ferrodds_take_instance`], leaving the samples in the reader (marked read).
///
/// # Safety
/// As [`ferrodds_take_instance`].
#[no_mangle]
pub unsafe extern "C" fn ferrodds_read_instance(
    reader: ferrodds_entity_t,
    samples: *mut ferrodds_sample_t,
    max: usize,
    mask: u32,
    handle: *const u8,
) -> ferrodds_return_t {
    // SAFETY: forwarded promises.
    unsafe {
        by_instance(
            "ferrodds_read_instance",
            reader,
            samples,
            max,
            mask,
            handle,
            false,
        )
    }
}

/// # Safety
/// As [`ferrodds_take_instance`].
unsafe fn by_instance(
    function: &str,
    reader: ferrodds_entity_t,
    samples: *mut ferrodds_sample_t,
    max: usize,
    mask: u32,
    handle: *const u8,
    take: bool,
) -> ferrodds_return_t {
    // SAFETY: the caller's promise.
    let which = match unsafe { instance_handle(handle, "handle") } {
        Ok(h) => Which::Instance(h),
        Err(fail) => return call(function, || Err(fail)),
    };
    // SAFETY: forwarded promise.
    unsafe {
        collect(
            function,
            reader,
            samples,
            max,
            mask,
            take,
            Form::Serialized,
            which,
        )
    }
}

/// [`ferrodds_take`] of the samples `mask` selects of the first instance after `previous`
/// (16 bytes; null: from the first) that has any, in instance-handle order: DCPS
/// `take_next_instance`. Calling it again with the instance of what it returned walks the
/// instances one at a time; `FERRODDS_RETCODE_NO_DATA` at the end.
///
/// # Safety
/// `samples` is null (with `max` 0) or points at `max` writable `ferrodds_sample_t`;
/// `previous` is null or points at 16 readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_take_next_instance(
    reader: ferrodds_entity_t,
    samples: *mut ferrodds_sample_t,
    max: usize,
    mask: u32,
    previous: *const u8,
) -> ferrodds_return_t {
    // SAFETY: forwarded promises.
    unsafe {
        next_instance(
            "ferrodds_take_next_instance",
            reader,
            samples,
            max,
            mask,
            previous,
            true,
        )
    }
}

/// [`ferrodds_take_next_instance`], leaving the samples in the reader (marked read).
///
/// # Safety
/// As [`ferrodds_take_next_instance`].
#[no_mangle]
pub unsafe extern "C" fn ferrodds_read_next_instance(
    reader: ferrodds_entity_t,
    samples: *mut ferrodds_sample_t,
    max: usize,
    mask: u32,
    previous: *const u8,
) -> ferrodds_return_t {
    // SAFETY: forwarded promises.
    unsafe {
        next_instance(
            "ferrodds_read_next_instance",
            reader,
            samples,
            max,
            mask,
            previous,
            false,
        )
    }
}

/// # Safety
/// As [`ferrodds_take_next_instance`].
unsafe fn next_instance(
    function: &str,
    reader: ferrodds_entity_t,
    samples: *mut ferrodds_sample_t,
    max: usize,
    mask: u32,
    previous: *const u8,
    take: bool,
) -> ferrodds_return_t {
    let previous = if previous.is_null() {
        None
    } else {
        // SAFETY: not null; the caller's promise of 16 bytes.
        match unsafe { instance_handle(previous, "previous") } {
            Ok(h) => Some(h),
            Err(fail) => return call(function, || Err(fail)),
        }
    };
    // SAFETY: forwarded promise.
    unsafe {
        collect(
            function,
            reader,
            samples,
            max,
            mask,
            take,
            Form::Serialized,
            Which::After(previous),
        )
    }
}

/// Registers the instance of the sample serialized at `data` (its key members count) with
/// `writer` and writes its handle (16 bytes) to `handle`: DCPS `register_instance`.
///
/// # Safety
/// `data` is null or points at `size` readable bytes; `handle` is null or points at 16
/// writable bytes.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_register_instance(
    writer: ferrodds_entity_t,
    data: *const u8,
    size: usize,
    handle: *mut u8,
) -> ferrodds_return_t {
    call("ferrodds_register_instance", || {
        // SAFETY: the caller's promises.
        let (bytes, out) = unsafe {
            (
                ptr::bytes(data, size, "data")?,
                ptr::out_slice(handle, 16, "handle")?,
            )
        };
        let w = self::writer(writer)?;
        let value = sample_of(w.dynamic_type(), bytes, "writer")?;
        out.copy_from_slice(&w.register_instance(&value)?.0);
        Ok(FERRODDS_RETCODE_OK)
    })
}

/// The instance of the sample serialized at `data` as `entity` (a writer or a reader) knows
/// it: writes its handle to `handle` and returns 1, or returns 0 (and writes zeros) when
/// the entity holds no such instance. DCPS `lookup_instance`.
///
/// # Safety
/// `data` is null or points at `size` readable bytes; `handle` is null or points at 16
/// writable bytes.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_lookup_instance(
    entity: ferrodds_entity_t,
    data: *const u8,
    size: usize,
    handle: *mut u8,
) -> ferrodds_return_t {
    call("ferrodds_lookup_instance", || {
        // SAFETY: the caller's promises.
        let (bytes, out) = unsafe {
            (
                ptr::bytes(data, size, "data")?,
                ptr::out_slice(handle, 16, "handle")?,
            )
        };
        let target = match registry().get(entity)? {
            Entity::Writer(w) => Entity::Writer(w.clone()),
            Entity::Reader(r) => Entity::Reader(r.clone()),
            e => return Err(wrong_kind(entity, e, "writer or reader")),
        };
        let found = match &target {
            Entity::Writer(w) => {
                w.lookup_instance(&sample_of(w.dynamic_type(), bytes, "writer")?)?
            }
            Entity::Reader(r) => {
                r.lookup_instance(&sample_of(r.dynamic_type(), bytes, "reader")?)?
            }
            _ => unreachable!("a writer or a reader"),
        };
        out.copy_from_slice(&found.unwrap_or(InstanceHandle::NIL).0);
        Ok(ferrodds_return_t::from(found.is_some()))
    })
}

/// Unregisters (`dispose` false) or disposes the instance `handle` of `writer`.
///
/// # Safety
/// `handle` is null or points at 16 readable bytes.
unsafe fn by_handle(
    function: &str,
    writer: ferrodds_entity_t,
    handle: *const u8,
    dispose: bool,
) -> ferrodds_return_t {
    call(function, || {
        // SAFETY: the caller's promise.
        let h = unsafe { instance_handle(handle, "handle") }?;
        let w = self::writer(writer)?;
        if dispose {
            w.dispose_instance(h)?;
        } else {
            w.unregister_instance(h)?;
        }
        Ok(FERRODDS_RETCODE_OK)
    })
}

/// Unregisters the instance `handle` (16 bytes, from [`ferrodds_register_instance`] or
/// [`ferrodds_lookup_instance`]) of `writer`: DCPS `unregister_instance` by handle.
///
/// # Safety
/// `handle` is null or points at 16 readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_unregister_instance(
    writer: ferrodds_entity_t,
    handle: *const u8,
) -> ferrodds_return_t {
    // SAFETY: forwarded promise.
    unsafe { by_handle("ferrodds_unregister_instance", writer, handle, false) }
}

/// Disposes the instance `handle` of `writer`: DCPS `dispose` by handle.
///
/// # Safety
/// `handle` is null or points at 16 readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_dispose_instance(
    writer: ferrodds_entity_t,
    handle: *const u8,
) -> ferrodds_return_t {
    // SAFETY: forwarded promise.
    unsafe { by_handle("ferrodds_dispose_instance", writer, handle, true) }
}

/// The sample serialized in `bytes`, of `ty` (the `whose` type).
fn sample_of(
    ty: &ferrodds::dynamic::DynamicType,
    bytes: &[u8],
    whose: &str,
) -> Result<DynamicValue, Fail> {
    deserialize(ty, bytes)
        .map_err(|e| Fail::bad(format!("data is not a sample of the {whose}'s type: {e}")))
}

/// Gives back the bytes of `n` samples taken or read from `reader`; each one's `data` is
/// set to null. A sample whose `data` is null is skipped. Data `reader` did not lend (or
/// lent and got back already) is `FERRODDS_RETCODE_BAD_PARAMETER`, after the others are
/// given back.
///
/// # Safety
/// `samples` is null (with `n` 0) or points at `n` writable `ferrodds_sample_t`.
#[no_mangle]
pub unsafe extern "C" fn ferrodds_return_loan(
    reader: ferrodds_entity_t,
    samples: *mut ferrodds_sample_t,
    n: usize,
) -> ferrodds_return_t {
    call("ferrodds_return_loan", || {
        // SAFETY: the caller's promise.
        let samples = unsafe { ptr::out_slice(samples, n, "samples") }?;
        let mut reg = registry();
        // A condition's samples are its reader's loans.
        let entry = reg.entry(reader)?;
        let owner = match &entry.entity {
            Entity::Reader(_) => reader,
            Entity::ReadCondition(..) | Entity::QueryCondition(..) => entry.parent,
            e => return Err(wrong_kind(reader, e, "reader or condition")),
        };
        let entry = reg.entry(owner)?;
        let mut unknown = None;
        let mut freed = Vec::new();
        for (i, s) in samples.iter_mut().enumerate() {
            if s.data.is_null() {
                continue;
            }
            match entry.loans.remove(&(s.data as usize)) {
                Some(bytes) => {
                    freed.push(bytes);
                    s.data = std::ptr::null();
                    s.size = 0;
                }
                None => unknown = unknown.or(Some(i)),
            }
        }
        // The buffers hold the reader's next samples.
        let lender = match &entry.entity {
            Entity::Reader(r) => Some(r.clone()),
            _ => None,
        };
        drop(reg);
        match lender {
            Some(r) => r.return_payloads(freed),
            None => drop(freed),
        }
        match unknown {
            Some(i) => Err(Fail::bad(format!(
                "samples[{i}].data was not lent by reader {reader}"
            ))),
            None => Ok(FERRODDS_RETCODE_OK),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_mask_selects_as_the_dcps_masks_do() {
        let any = selection(0).expect("0 is any");
        assert_eq!(
            (any.sample_states, any.view_states, any.instance_states),
            (3, 3, 7)
        );
        let s =
            selection(FERRODDS_NOT_READ_SAMPLE_STATE | FERRODDS_NOT_ALIVE_DISPOSED_INSTANCE_STATE)
                .expect("a mask");
        assert_eq!(
            (s.sample_states, s.view_states, s.instance_states),
            (2, 3, 2)
        );
        assert!(selection(0x80).is_err());
    }
}
