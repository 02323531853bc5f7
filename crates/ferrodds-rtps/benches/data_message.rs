//! Building and parsing an RTPS DATA datagram: header, INFO_TS, DATA with a PID_KEY_HASH
//! inline QoS and a 64-byte or 1 KiB serialized sample (encapsulation header included).
//!
//! - `build_allocating`: what `Writer` does for each change (through the public wire API):
//!   the inline QoS emitted into a new `Vec` and parsed back into a `ParameterList`, then
//!   `message_to_vec` (one exactly sized `Vec`, the payload copied in). The writer also
//!   copies the submessage list and the locators into the `Transmit`; see
//!   `writer_history/write_one_reader` for the whole path.
//! - `build_reused`: the same message emitted with `MessageBuilder` into a buffer that is
//!   reused, inline QoS too: the floor without allocation.
//! - `parse`: `Message::parse` and every submessage walked, as a receiver does: the
//!   timestamp read, the key hash found in the inline QoS, the payload's length taken.
//!
//! `cargo bench -p ferrodds-rtps --bench data_message`

#![allow(clippy::unwrap_used, missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ferrodds_rtps::wire::parameter_list::pid;
use ferrodds_rtps::wire::{
    message_to_vec, Data, DataPayload, Endianness, EntityId, GuidPrefix, Header, InfoTimestamp,
    Message, MessageBuilder, ParameterList, ParameterListBuilder, ProtocolVersion, SequenceNumber,
    Submessage, Time, VendorId,
};

const HEADER: Header = Header {
    version: ProtocolVersion::V2_5,
    vendor_id: VendorId::FERRODDS,
    guid_prefix: GuidPrefix([1; 12]),
};
const KEY_HASH: [u8; 16] = [0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];

/// Emits the key hash inline QoS into `out` (cleared first) and parses it back.
fn inline_qos(out: &mut Vec<u8>) -> ParameterList<'_> {
    out.clear();
    let mut b = ParameterListBuilder::new(out, Endianness::Little);
    b.push(pid::KEY_HASH, &KEY_HASH).unwrap();
    b.finish();
    ParameterList::parse(out, Endianness::Little).unwrap().0
}

/// INFO_TS and DATA of change `seq`.
fn submessages<'a>(
    seq: i64,
    inline_qos: ParameterList<'a>,
    payload: &'a [u8],
) -> [Submessage<'a>; 2] {
    let ts = InfoTimestamp {
        timestamp: Some(Time::from_nanos(1_700_000_000_000_000_000)),
    };
    let data = Data {
        extra_flags: 0,
        reader_id: EntityId::UNKNOWN,
        writer_id: EntityId([0, 0, 1, 2]),
        writer_sn: SequenceNumber(seq),
        inline_qos: Some(inline_qos),
        payload: DataPayload::Data(payload),
        non_standard_payload: false,
    };
    [ts.into(), data.into()]
}

/// The message in a new `Vec`; the inline QoS in `qos`, reused.
fn build_allocating(qos: &mut Vec<u8>, seq: i64, payload: &[u8]) -> Vec<u8> {
    let list = inline_qos(qos);
    message_to_vec(
        &HEADER,
        &submessages(seq, list, payload),
        Endianness::Little,
    )
    .unwrap()
}

/// What a receiver reads from the message: timestamp, key hash and payload length.
fn parse(datagram: &[u8]) -> (Option<Time>, Option<[u8; 16]>, usize) {
    let (header, iter) = Message::parse(datagram).unwrap();
    black_box(header);
    let mut out = (None, None, 0);
    for sm in iter {
        match sm.unwrap() {
            Submessage::InfoTimestamp(ts) => out.0 = ts.timestamp,
            Submessage::Data(data) => {
                out.1 = data
                    .inline_qos
                    .and_then(|q| q.find(pid::KEY_HASH))
                    .and_then(|p| p.value.try_into().ok());
                out.2 = data.payload.bytes().map_or(0, <[u8]>::len);
            }
            _ => {}
        }
    }
    out
}

fn bench_data(c: &mut Criterion) {
    let mut group = c.benchmark_group("data_message");
    for size in [64usize, 1024] {
        let mut payload = vec![0x00, 0x01, 0x00, 0x00];
        payload.extend((4..size).map(|i| i as u8));
        let mut qos = Vec::with_capacity(32);
        let datagram = build_allocating(&mut qos, 1, &payload);
        assert_eq!(
            parse(&datagram),
            (
                Some(Time::from_nanos(1_700_000_000_000_000_000)),
                Some(KEY_HASH),
                size
            )
        );
        group.throughput(Throughput::Bytes(datagram.len() as u64));

        let mut seq = 0;
        group.bench_with_input(
            BenchmarkId::new("build_allocating", size),
            &payload,
            |b, p| {
                b.iter(|| {
                    seq += 1;
                    build_allocating(&mut qos, seq, black_box(p))
                })
            },
        );

        let mut buf = vec![0u8; 2048];
        group.bench_with_input(BenchmarkId::new("build_reused", size), &payload, |b, p| {
            b.iter(|| {
                seq += 1;
                let list = inline_qos(&mut qos);
                let mut m = MessageBuilder::new(&mut buf, &HEADER, Endianness::Little).unwrap();
                for sm in &submessages(seq, list, black_box(p)) {
                    m.push(sm).unwrap();
                }
                black_box(m.finish())
            })
        });
        assert_eq!(
            &buf[..datagram.len()],
            &build_allocating(&mut qos, seq, &payload)[..]
        );

        group.bench_with_input(BenchmarkId::new("parse", size), &datagram, |b, d| {
            b.iter(|| parse(black_box(d)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_data);
criterion_main!(benches);
