//! Serialization speed: a keyed struct with an octet payload at 64 B … 64 KiB (sizes are the
//! whole serialized sample, encapsulation header included), a mixed struct of ~20 members,
//! and a plain copy of the same bytes as the floor; and the same samples through runtime
//! types (`ferrodds_cdr::dynamic`) beside derived code (`runtime_vs_derived`).
//!
//! `cargo bench -p ferrodds-cdr --bench serialization`

#![allow(clippy::unwrap_used, missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::sync::Arc;

use ferrodds_cdr::{
    deserialize, dynamic, serialize_into, Cdr, Endianness, Extensibility, JsonView, XcdrVersion,
};

/// `@appendable struct KeyedPayload { @key int32 id; sequence<uint8> payload; };`
#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "bench::KeyedPayload")]
struct KeyedPayload {
    #[cdr(key)]
    id: i32,
    payload: Vec<u8>,
}

/// The same type with `Cdr` written by hand, the way one would without the derive: the
/// derive's output should cost no more.
#[derive(Debug, Clone, PartialEq)]
struct HandWritten {
    id: i32,
    payload: Vec<u8>,
}

impl ferrodds_cdr::JsonView for HandWritten {
    fn to_json(&self) -> serde_json::Value {
        serde_json::json!({ "id": self.id, "payload": self.payload })
    }
    fn from_json(_: &serde_json::Value) -> Result<Self, ferrodds_cdr::JsonError> {
        Err(ferrodds_cdr::JsonError::new(
            "nothing",
            "not used in this benchmark",
        ))
    }
}

impl Cdr for HandWritten {
    const TYPE_NAME: &'static str = "bench::KeyedPayload";
    const KIND: ferrodds_cdr::TypeKind =
        ferrodds_cdr::TypeKind::Struct(ferrodds_cdr::Extensibility::Appendable);
    const MIN_SIZE: usize = 4;
    const IS_KEYED: bool = true;

    fn dynamic_type() -> dynamic::DynamicType {
        keyed_payload_type()
    }

    fn encode(&self, e: &mut ferrodds_cdr::Encoder<'_>) -> Result<(), ferrodds_cdr::EncodeError> {
        let dheader = if e.is_xcdr2() {
            Some(e.begin_length())
        } else {
            None
        };
        e.write_i32(self.id);
        e.write_length(self.payload.len())?;
        e.write_bytes(&self.payload);
        match dheader {
            Some(at) => e.end_length(at),
            None => Ok(()),
        }
    }

    fn decode(d: &mut ferrodds_cdr::Decoder<'_>) -> Result<Self, ferrodds_cdr::DecodeError> {
        let outer = if d.is_xcdr2() {
            Some(d.begin_delimited("DHEADER")?)
        } else {
            None
        };
        let id = d.read_i32()?;
        let n = d.read_count("payload", 1)?;
        let payload = d.bytes(n, "payload")?.to_vec();
        if let Some(outer) = outer {
            d.restore(outer);
        }
        Ok(HandWritten { id, payload })
    }

    fn max_end(_: usize, _: usize) -> Option<usize> {
        None
    }
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(final, type_name = "bench::Vec3")]
struct Vec3 {
    x: f64,
    y: f64,
    z: f64,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "bench::Mixed")]
struct Mixed {
    #[cdr(key)]
    id: u32,
    #[cdr(key)]
    frame_id: String,
    stamp_sec: i32,
    stamp_nanosec: u32,
    position: Vec3,
    velocity: Vec3,
    orientation: [f64; 4],
    covariance: [f64; 9],
    valid: bool,
    mode: u8,
    temperature: f32,
    pressure: f32,
    battery: f32,
    name: String,
    labels: Vec<String>,
    tags: Vec<u16>,
    waypoints: Vec<Vec3>,
    history: Vec<Vec<i32>>,
    seq: u64,
    status: i16,
}

fn mixed() -> Mixed {
    let p = |v: f64| Vec3 {
        x: v,
        y: v + 1.0,
        z: v + 2.0,
    };
    Mixed {
        id: 17,
        frame_id: "base_link".into(),
        stamp_sec: 1_700_000_000,
        stamp_nanosec: 123_456_789,
        position: p(1.0),
        velocity: p(0.1),
        orientation: [0.0, 0.0, 0.0, 1.0],
        covariance: [0.01; 9],
        valid: true,
        mode: 3,
        temperature: 21.5,
        pressure: 1013.25,
        battery: 0.87,
        name: "rover-1".into(),
        labels: vec!["outdoor".into(), "survey".into(), "night".into()],
        tags: vec![1, 2, 3, 5, 8, 13],
        waypoints: (0..4).map(|i| p(f64::from(i))).collect(),
        history: vec![vec![1, 2, 3], vec![4, 5], vec![6]],
        seq: 99,
        status: -1,
    }
}

const SIZES: [usize; 5] = [64, 256, 1024, 4096, 65536];
/// Encapsulation header, DHEADER, id and sequence length.
const OVERHEAD: usize = 16;

fn bench_payloads(c: &mut Criterion) {
    for version in [XcdrVersion::Xcdr2, XcdrVersion::Xcdr1] {
        let mut group = c.benchmark_group(format!("keyed_payload_{version:?}").to_lowercase());
        for size in SIZES {
            let sample = KeyedPayload {
                id: 7,
                payload: (0..size - OVERHEAD).map(|i| i as u8).collect(),
            };
            let mut buf = Vec::with_capacity(size + 64);
            serialize_into(&sample, version, Endianness::Little, &mut buf).unwrap();
            if version == XcdrVersion::Xcdr2 {
                assert_eq!(buf.len(), size, "the sample is exactly the nominal size");
            }
            let bytes = buf.clone();
            group.throughput(Throughput::Bytes(size as u64));
            group.bench_with_input(BenchmarkId::new("serialize", size), &sample, |b, s| {
                b.iter(|| {
                    buf.clear();
                    serialize_into(black_box(s), version, Endianness::Little, &mut buf).unwrap();
                    black_box(buf.len())
                })
            });
            group.bench_with_input(BenchmarkId::new("deserialize", size), &bytes, |b, bytes| {
                b.iter(|| black_box(deserialize::<KeyedPayload>(black_box(bytes)).unwrap()))
            });
            // The floor: copying the same number of bytes into a reused buffer, and into a
            // new one (deserializing must allocate the payload it returns).
            group.bench_with_input(BenchmarkId::new("memcpy", size), &bytes, |b, bytes| {
                b.iter(|| {
                    buf.clear();
                    buf.extend_from_slice(black_box(bytes));
                    black_box(buf.len())
                })
            });
            group.bench_with_input(
                BenchmarkId::new("memcpy_alloc", size),
                &bytes,
                |b, bytes| b.iter(|| black_box(black_box(bytes.as_slice()).to_vec())),
            );
        }
        group.finish();
    }
}

fn bench_derived_vs_hand_written(c: &mut Criterion) {
    let mut group = c.benchmark_group("derived_vs_hand_written_64");
    let derived = KeyedPayload {
        id: 7,
        payload: (0..48).collect(),
    };
    let hand = HandWritten {
        id: 7,
        payload: (0..48).collect(),
    };
    let mut buf = Vec::with_capacity(128);
    serialize_into(&derived, XcdrVersion::Xcdr2, Endianness::Little, &mut buf).unwrap();
    let bytes = buf.clone();
    group.bench_function("serialize/derived", |b| {
        b.iter(|| {
            buf.clear();
            serialize_into(
                black_box(&derived),
                XcdrVersion::Xcdr2,
                Endianness::Little,
                &mut buf,
            )
            .unwrap();
            black_box(buf.len())
        })
    });
    group.bench_function("serialize/hand_written", |b| {
        b.iter(|| {
            buf.clear();
            serialize_into(
                black_box(&hand),
                XcdrVersion::Xcdr2,
                Endianness::Little,
                &mut buf,
            )
            .unwrap();
            black_box(buf.len())
        })
    });
    group.bench_function("deserialize/derived", |b| {
        b.iter(|| black_box(deserialize::<KeyedPayload>(black_box(&bytes)).unwrap()))
    });
    group.bench_function("deserialize/hand_written", |b| {
        b.iter(|| black_box(deserialize::<HandWritten>(black_box(&bytes)).unwrap()))
    });
    group.finish();
}

fn bench_mixed(c: &mut Criterion) {
    let sample = mixed();
    let mut group = c.benchmark_group("mixed_20_members");
    for version in [XcdrVersion::Xcdr2, XcdrVersion::Xcdr1] {
        let mut buf = Vec::with_capacity(1024);
        serialize_into(&sample, version, Endianness::Little, &mut buf).unwrap();
        let bytes = buf.clone();
        let name = format!("{version:?}").to_lowercase();
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function(BenchmarkId::new("serialize", &name), |b| {
            b.iter(|| {
                buf.clear();
                serialize_into(black_box(&sample), version, Endianness::Little, &mut buf).unwrap();
                black_box(buf.len())
            })
        });
        group.bench_function(BenchmarkId::new("deserialize", &name), |b| {
            b.iter(|| black_box(deserialize::<Mixed>(black_box(&bytes)).unwrap()))
        });
    }
    group.finish();
}

fn bench_key_hash(c: &mut Criterion) {
    let sample = mixed();
    let keyed = KeyedPayload {
        id: 7,
        payload: vec![0; 48],
    };
    let mut group = c.benchmark_group("key_hash");
    group.bench_function("int32_key", |b| {
        b.iter(|| black_box(ferrodds_cdr::key_hash(black_box(&keyed), XcdrVersion::Xcdr2).unwrap()))
    });
    group.bench_function("string_key_md5", |b| {
        b.iter(|| {
            black_box(ferrodds_cdr::key_hash(black_box(&sample), XcdrVersion::Xcdr2).unwrap())
        })
    });
    group.finish();
}

/// The runtime type of a derived one, for the benchmark: built by hand, as a Python class or
/// an IDL file would build it.
fn vec3_type() -> dynamic::DynamicType {
    use dynamic::{DynamicType as T, Member, StructType};
    T::Struct(Arc::new(StructType {
        name: "bench::Vec3".into(),
        extensibility: Extensibility::Final,
        base: None,
        members: ["x", "y", "z"]
            .iter()
            .enumerate()
            .map(|(i, n)| Member::new(n, i as u32, T::Float64))
            .collect(),
    }))
}

fn mixed_type() -> dynamic::DynamicType {
    use dynamic::{DynamicType as T, Member, StructType};
    let seq = |t: T| T::Sequence {
        element: Box::new(t),
        bound: None,
    };
    let array = |t: T, n: usize| T::Array {
        element: Box::new(t),
        dimensions: vec![n],
    };
    let string = || T::String { bound: None };
    let members = vec![
        ("id", T::UInt32),
        ("frame_id", string()),
        ("stamp_sec", T::Int32),
        ("stamp_nanosec", T::UInt32),
        ("position", vec3_type()),
        ("velocity", vec3_type()),
        ("orientation", array(T::Float64, 4)),
        ("covariance", array(T::Float64, 9)),
        ("valid", T::Bool),
        ("mode", T::UInt8),
        ("temperature", T::Float32),
        ("pressure", T::Float32),
        ("battery", T::Float32),
        ("name", string()),
        ("labels", seq(string())),
        ("tags", seq(T::UInt16)),
        ("waypoints", seq(vec3_type())),
        ("history", seq(seq(T::Int32))),
        ("seq", T::UInt64),
        ("status", T::Int16),
    ];
    T::Struct(Arc::new(StructType {
        name: "bench::Mixed".into(),
        extensibility: Extensibility::Appendable,
        base: None,
        members: members
            .into_iter()
            .enumerate()
            .map(|(i, (n, t))| {
                let m = Member::new(n, i as u32, t);
                if i < 2 {
                    m.key()
                } else {
                    m
                }
            })
            .collect(),
    }))
}

fn keyed_payload_type() -> dynamic::DynamicType {
    use dynamic::{DynamicType as T, Member, StructType};
    T::Struct(Arc::new(StructType {
        name: "bench::KeyedPayload".into(),
        extensibility: Extensibility::Appendable,
        base: None,
        members: vec![
            Member::new("id", 0, T::Int32).key(),
            Member::new(
                "payload",
                1,
                T::Sequence {
                    element: Box::new(T::UInt8),
                    bound: None,
                },
            ),
        ],
    }))
}

/// Serializes and deserializes `sample` through derived code and through its runtime type
/// `ty`, in XCDR2 (both must give the same bytes).
fn runtime_pair<S: Cdr + JsonView>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    sample: &S,
    ty: &dynamic::DynamicType,
) {
    let version = XcdrVersion::Xcdr2;
    let value = dynamic::DynamicValue::from_json(ty, &sample.to_json()).unwrap();
    let mut buf = Vec::with_capacity(1024);
    serialize_into(sample, version, Endianness::Little, &mut buf).unwrap();
    let bytes = buf.clone();
    assert_eq!(
        dynamic::serialize(ty, &value, version, Endianness::Little).unwrap(),
        bytes,
        "runtime and derived encodings agree"
    );
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function(BenchmarkId::new("serialize/derived", name), |b| {
        b.iter(|| {
            buf.clear();
            serialize_into(black_box(sample), version, Endianness::Little, &mut buf).unwrap();
            black_box(buf.len())
        })
    });
    group.bench_function(BenchmarkId::new("serialize/runtime", name), |b| {
        b.iter(|| {
            buf.clear();
            dynamic::serialize_into(ty, black_box(&value), version, Endianness::Little, &mut buf)
                .unwrap();
            black_box(buf.len())
        })
    });
    group.bench_function(BenchmarkId::new("deserialize/derived", name), |b| {
        b.iter(|| black_box(deserialize::<S>(black_box(&bytes)).unwrap()))
    });
    group.bench_function(BenchmarkId::new("deserialize/runtime", name), |b| {
        b.iter(|| black_box(dynamic::deserialize(ty, black_box(&bytes)).unwrap()))
    });
}

fn bench_runtime_vs_derived(c: &mut Criterion) {
    let mut group = c.benchmark_group("runtime_vs_derived");
    let keyed = keyed_payload_type();
    for size in [64, 1024, 65536] {
        let sample = KeyedPayload {
            id: 7,
            payload: (0..size - OVERHEAD).map(|i| i as u8).collect(),
        };
        runtime_pair(
            &mut group,
            &format!("keyed_payload_{size}"),
            &sample,
            &keyed,
        );
    }
    runtime_pair(&mut group, "mixed_20_members", &mixed(), &mixed_type());
    group.finish();
}

/// The JSON path of the bindings (`write_json`, `take_json`): JSON text to XCDR2 bytes and
/// back through a runtime type, as whole steps.
fn bench_json_view(c: &mut Criterion) {
    let mut group = c.benchmark_group("json_view");
    let ty = keyed_payload_type();
    let version = XcdrVersion::Xcdr2;
    for size in [2048, 8192, 65536] {
        let sample = KeyedPayload {
            id: 7,
            payload: (0..size).map(|i| (i * 7) as u8).collect(),
        };
        let mut bytes = Vec::new();
        serialize_into(&sample, version, Endianness::Little, &mut bytes).unwrap();
        // The runtime type's view: the payload as base64, as the bindings hand it over.
        let text =
            ferrodds_cdr::json_text(&dynamic::deserialize(&ty, &bytes).unwrap().to_json(&ty));
        group.throughput(Throughput::Bytes(size as u64));
        group.bench_with_input(BenchmarkId::new("text_to_cdr", size), &text, |b, text| {
            b.iter(|| {
                let value = dynamic::DynamicValue::from_json_text(&ty, black_box(text)).unwrap();
                black_box(dynamic::serialize(&ty, &value, version, Endianness::Little).unwrap())
            })
        });
        group.bench_with_input(BenchmarkId::new("cdr_to_text", size), &bytes, |b, bytes| {
            b.iter(|| {
                let value = dynamic::deserialize(&ty, black_box(bytes)).unwrap();
                black_box(value.to_json_text(&ty))
            })
        });
        // The same through a `serde_json::Value` document (the path before session 23).
        group.bench_with_input(
            BenchmarkId::new("text_to_cdr/document", size),
            &text,
            |b, text| {
                b.iter(|| {
                    let json: serde_json::Value = serde_json::from_str(black_box(text)).unwrap();
                    let value = dynamic::DynamicValue::from_json(&ty, &json).unwrap();
                    black_box(dynamic::serialize(&ty, &value, version, Endianness::Little).unwrap())
                })
            },
        );
        group.bench_with_input(
            BenchmarkId::new("cdr_to_text/document", size),
            &bytes,
            |b, bytes| {
                b.iter(|| {
                    let value = dynamic::deserialize(&ty, black_box(bytes)).unwrap();
                    black_box(ferrodds_cdr::json_text(&value.to_json(&ty)))
                })
            },
        );
    }
    group.finish();
}

criterion_group!(
    benches,
    bench_json_view,
    bench_runtime_vs_derived,
    bench_payloads,
    bench_derived_vs_hand_written,
    bench_mixed,
    bench_key_hash
);
criterion_main!(benches);
