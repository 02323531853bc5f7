//! Sample channels: a writer's samples in shared memory, read where they lie by the
//! FerroDDS readers of the host — what makes a loan zero-copy between processes.
//!
//! The shared-memory inbox ([`crate::shared_memory`]) carries datagrams: a sample is copied
//! into the receiver's segment and out again. A writer that lends samples has, besides, an
//! iceoryx2 publish-subscribe service of its own, named for its GUID ([`SampleChannel`]).
//! Its loans are chunks of that service's segment, filled in place by the application;
//! sending one publishes it to every subscriber: one per participant of the host that
//! reads the writer ([`ChannelReader`]), and the writer's own *keeper*. The keeper is there
//! because an iceoryx2 publisher keeps nothing it sent, and reliability needs the bytes
//! for as long as the writer's history holds the change (repairs, UDP readers, late
//! joiners): the writer's history holds the keeper's view of the chunk, and the chunk
//! goes back to the pool when the history and every reader let go of it.
//!
//! Each chunk carries the change's sequence number in its user header, so that a reader
//! matches it with the DATA that announces it (which travels the usual way, through the
//! inbox, and carries everything but the payload). A reader that misses a chunk (its queue
//! full, or it subscribed late) treats the DATA as lost and gets a repair with the bytes.
//!
//! Chunks are counted on both sides ([`Held`]): iceoryx2 refuses to hand a subscriber more
//! than [`BORROWED`] at once, so a writer lends from the heap again while its history holds
//! that many, and a reader copies a chunk out of the segment when it already holds that
//! many less one. Zero copy is for a reader that keeps up and a history that lets go.

use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use iceoryx2::port::publisher::Publisher;
use iceoryx2::port::subscriber::Subscriber;
use iceoryx2::prelude::*;
use iceoryx2::sample::Sample;
use iceoryx2::sample_mut::SampleMut;
use iceoryx2::service::port_factory::publish_subscribe;

use crate::shared_memory::{host, iceoryx, Host, Ipc, SharedMemoryError};
use crate::stillborn::remove_stillborn_segments;

/// Reader processes a channel has room for (participants of the host that read one
/// writer); a reader that finds no room gets each lent sample by repair, through its inbox.
/// Only address space grows with it: iceoryx2 hands out the chunk freed last first, so
/// the memory touched is what is in flight, not what could be.
pub const MAX_CHANNEL_READERS: usize = 8;

/// Chunks a subscriber (a reader, or the writer's keeper) may hold at once: a writer's
/// history of more lends from the heap.
pub const BORROWED: usize = 8;

/// Chunks sent to a reader and not yet matched with their DATA: as many as the writer's
/// history may hold, which a burst of writes sends before the reader's first DATA comes.
const QUEUED: usize = BORROWED;

/// Chunks lent at once (threads of the application filling loans of one writer).
const LOANS: usize = 4;

type Channel = publish_subscribe::PortFactory<Ipc, [u8], u64>;

fn service_name(writer: &[u8; 16]) -> Result<ServiceName, SharedMemoryError> {
    let hex: String = writer.iter().map(|b| format!("{b:02x}")).collect();
    ServiceName::new(&format!("ferrodds/samples/{hex}")).map_err(iceoryx("name a sample channel"))
}

/// A chunk a subscriber holds, as the owner of the [`Bytes`] it is handed out as; counted
/// while it lives.
#[derive(Debug)]
struct Held {
    sample: Sample<Ipc, [u8], u64>,
    count: Arc<AtomicUsize>,
}

impl AsRef<[u8]> for Held {
    fn as_ref(&self) -> &[u8] {
        self.sample.payload()
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.count.fetch_sub(1, Ordering::Release);
    }
}

fn hold(sample: Sample<Ipc, [u8], u64>, count: &Arc<AtomicUsize>) -> Bytes {
    count.fetch_add(1, Ordering::AcqRel);
    Bytes::from_owner(Held {
        sample,
        count: Arc::clone(count),
    })
}

/// A writer's sample channel.
#[derive(Debug)]
pub struct SampleChannel {
    publisher: Publisher<Ipc, [u8], u64>,
    keeper: Subscriber<Ipc, [u8], u64>,
    /// Chunks the writer's history holds (through the keeper).
    held: Arc<AtomicUsize>,
    /// Chunks lent and not yet sent or dropped: each will be held once sent, so the
    /// keeper's limit counts them already (an application holding two loans at once must
    /// not find the second refused at its send).
    lent: Arc<AtomicUsize>,
    /// A send and the keeper's receive of what it sent, one thread at a time; the number
    /// of the last chunk sent.
    turn: Mutex<u64>,
    service: Channel,
    /// Last: outlives the ports above.
    _host: Arc<Host>,
}

/// A chunk of a writer's channel, lent to be filled in place ([`SampleChannel::loan`]).
/// Its bytes are whatever the chunk held before (a previous sample's, or zeros): a loan
/// is to be written whole.
#[derive(Debug)]
pub struct ChunkLoan {
    sample: SampleMut<Ipc, [u8], u64>,
    _lent: Lent,
}

/// Counts a loan in [`SampleChannel::lent`] while it lives.
#[derive(Debug)]
struct Lent(Arc<AtomicUsize>);

impl Drop for Lent {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Release);
    }
}

impl std::ops::Deref for ChunkLoan {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.sample.payload()
    }
}

impl std::ops::DerefMut for ChunkLoan {
    fn deref_mut(&mut self) -> &mut [u8] {
        self.sample.payload_mut()
    }
}

impl SampleChannel {
    /// Creates the channel of the writer with GUID `writer`, its chunks first sized for
    /// `first_len` bytes (larger loans grow the segment).
    pub fn create(writer: &[u8; 16], first_len: usize) -> Result<SampleChannel, SharedMemoryError> {
        let host = host()?;
        let builder = host
            .node
            .service_builder(&service_name(writer)?)
            .publish_subscribe::<[u8]>()
            .user_header::<u64>();
        // A sample's body starts 4 bytes in (its encapsulation header): aligned for plain
        // types of alignment up to 4, which a loan's `&mut T` needs.
        let builder = match Alignment::new(8) {
            Some(a) => builder.payload_alignment(a),
            None => builder,
        };
        let service = builder
            .max_publishers(1)
            .max_subscribers(MAX_CHANNEL_READERS + 1)
            .max_nodes(MAX_CHANNEL_READERS + 2)
            .subscriber_max_buffer_size(QUEUED)
            .subscriber_max_borrowed_samples(BORROWED)
            .history_size(0)
            .enable_safe_overflow(false)
            .create()
            .map_err(iceoryx("create a sample channel"))?;
        let publisher = service
            .publisher_builder()
            .initial_max_slice_len(first_len.max(64))
            .allocation_strategy(AllocationStrategy::PowerOfTwo)
            // A reader whose queue is full misses the chunk and asks for a repair: the
            // writer never waits for a reader here.
            .backpressure_strategy(BackpressureStrategy::DiscardData)
            .max_loaned_samples(LOANS)
            .create()
            .map_err(iceoryx("publish on a sample channel"))?;
        let keeper = service
            .subscriber_builder()
            .buffer_size(QUEUED)
            .create()
            .map_err(iceoryx("keep a sample channel's chunks"))?;
        Ok(SampleChannel {
            publisher,
            keeper,
            held: Arc::new(AtomicUsize::new(0)),
            lent: Arc::new(AtomicUsize::new(0)),
            turn: Mutex::new(0),
            service,
            _host: host,
        })
    }

    /// Whether the history may take one more chunk (else the writer lends from the heap).
    pub fn has_room(&self) -> bool {
        self.held.load(Ordering::Acquire) + self.lent.load(Ordering::Acquire) < BORROWED
    }

    /// How many readers (besides the writer's keeper) are subscribed.
    pub fn readers(&self) -> usize {
        self.service
            .dynamic_config()
            .number_of_subscribers()
            .saturating_sub(1)
    }

    /// Lends a chunk of `len` bytes; `None` when the channel has none to lend (every chunk
    /// held, or iceoryx2 refused): the writer lends from the heap instead.
    pub fn loan(&self, len: usize) -> Option<ChunkLoan> {
        // Counted before the check, so that two threads cannot both take the last room.
        self.lent.fetch_add(1, Ordering::AcqRel);
        let lent = Lent(Arc::clone(&self.lent));
        if self.held.load(Ordering::Acquire) + self.lent.load(Ordering::Acquire) > BORROWED {
            return None;
        }
        let sample = match self.publisher.loan_slice_uninit(len) {
            Ok(s) => s,
            Err(e) => {
                tracing::debug!(error = %e, len, "no chunk to lend");
                return None;
            }
        };
        // SAFETY: the chunk lies in a shared-memory segment, a file mapping that the
        // kernel filled with zeros when it was made and that has only ever been written
        // with bytes since (earlier samples): every byte of it is initialized. iceoryx2
        // calls it uninitialized because it does not know which bytes the caller wants.
        #[allow(unsafe_code)]
        let sample = unsafe { sample.assume_init() };
        Some(ChunkLoan {
            sample,
            _lent: lent,
        })
    }

    /// Publishes a filled loan to every reader subscribed, numbered one more than the
    /// chunk sent before it, and returns its number and the writer's own view of it,
    /// which holds the chunk for the history.
    pub fn send(&self, loan: ChunkLoan) -> io::Result<(u64, Bytes)> {
        // The loan stays counted until the keeper holds the chunk (`_lent` drops last).
        let ChunkLoan { mut sample, _lent } = loan;
        let mut last = self.turn.lock().unwrap_or_else(|p| p.into_inner());
        let sequence_number = *last + 1;
        *sample.user_header_mut() = sequence_number;
        sample.send().map_err(io::Error::other)?;
        *last = sequence_number;
        // The keeper's queue holds what this thread sent, and only that (sends take turns).
        loop {
            match self.keeper.receive().map_err(io::Error::other)? {
                Some(sample) if *sample.user_header() == sequence_number => {
                    return Ok((sequence_number, hold(sample, &self.held)));
                }
                Some(_) => continue,
                None => {
                    return Err(io::Error::other(
                        "a sample channel's keeper did not receive what was sent",
                    ))
                }
            }
        }
    }
}

/// A chunk a reader took.
#[derive(Debug)]
pub enum Taken {
    /// Where it lies in the segment (held until dropped).
    InPlace(Bytes),
    /// Copied out: the reader already held as many chunks as it may.
    Copied(Vec<u8>),
}

impl std::ops::Deref for Taken {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Taken::InPlace(b) => b,
            Taken::Copied(v) => v,
        }
    }
}

/// A participant's subscription to one writer's sample channel.
#[derive(Debug)]
pub struct ChannelReader {
    subscriber: Subscriber<Ipc, [u8], u64>,
    /// A chunk received ahead of its DATA.
    early: Option<Sample<Ipc, [u8], u64>>,
    held: Arc<AtomicUsize>,
    _service: Channel,
    _host: Arc<Host>,
}

impl ChannelReader {
    /// Subscribes to the channel of the writer with GUID `writer`; an error when it has
    /// none (or no room for another reader).
    pub fn open(writer: &[u8; 16]) -> Result<ChannelReader, SharedMemoryError> {
        let host = host()?;
        // Opening a service cleans up after its dead nodes.
        remove_stillborn_segments();
        let service = host
            .node
            .service_builder(&service_name(writer)?)
            .publish_subscribe::<[u8]>()
            .user_header::<u64>()
            .open()
            .map_err(iceoryx("open a sample channel"))?;
        let subscriber = service
            .subscriber_builder()
            .buffer_size(QUEUED)
            .create()
            .map_err(iceoryx("subscribe to a sample channel"))?;
        Ok(ChannelReader {
            subscriber,
            early: None,
            held: Arc::new(AtomicUsize::new(0)),
            _service: service,
            _host: host,
        })
    }

    /// The chunk numbered `sequence_number`, if it came: earlier chunks are dropped on the
    /// way (their DATA was lost or is no longer wanted), a later one is kept for its DATA.
    /// Handed out where it lies while this reader holds fewer than [`BORROWED`] less one,
    /// else copied out of the segment.
    pub fn take(&mut self, sequence_number: u64) -> Option<Taken> {
        loop {
            let sample = match self.early.take() {
                Some(s) => s,
                None => match self.subscriber.receive() {
                    Ok(Some(s)) => s,
                    Ok(None) => return None,
                    Err(e) => {
                        tracing::debug!(error = %e, "sample channel receive failed");
                        return None;
                    }
                },
            };
            let seq = *sample.user_header();
            if seq < sequence_number {
                continue;
            }
            if seq > sequence_number {
                self.early = Some(sample);
                return None;
            }
            if self.held.load(Ordering::Acquire) + 1 >= BORROWED {
                return Some(Taken::Copied(sample.payload().to_vec()));
            }
            return Some(Taken::InPlace(hold(sample, &self.held)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guid(n: u8) -> [u8; 16] {
        let mut g = [0xC5; 16];
        g[0] = n;
        g[4..8].copy_from_slice(&std::process::id().to_be_bytes());
        g
    }

    #[test]
    fn a_chunk_filled_in_place_is_read_where_it_lies_by_reader_and_keeper() {
        let w = guid(1);
        let channel = SampleChannel::create(&w, 4096).unwrap();
        let mut reader = ChannelReader::open(&w).unwrap();
        assert_eq!(channel.readers(), 1);
        let mut loan = channel.loan(1000).unwrap();
        for (i, b) in loan.iter_mut().enumerate() {
            *b = i as u8;
        }
        let (n, kept) = channel.send(loan).unwrap();
        assert_eq!((n, kept.len()), (1, 1000));
        // Nothing of chunk 0 came; chunk 1 did.
        assert!(reader.take(0).is_none());
        let got = reader.take(1).unwrap();
        assert!(got.iter().enumerate().all(|(i, &b)| b == i as u8));
        assert!(reader.take(1).is_none(), "taken once");
    }

    #[test]
    fn the_history_and_the_reader_hold_a_bounded_number_of_chunks() {
        let w = guid(2);
        let channel = SampleChannel::create(&w, 64).unwrap();
        let mut reader = ChannelReader::open(&w).unwrap();
        let mut kept = Vec::new();
        let mut got = Vec::new();
        for seq in 1..=BORROWED as u64 {
            let mut loan = channel.loan(64).expect("room");
            loan[0] = seq as u8;
            let (n, k) = channel.send(loan).unwrap();
            assert_eq!(n, seq);
            kept.push(k);
            got.push(reader.take(seq).unwrap());
        }
        assert!(!channel.has_room());
        assert!(channel.loan(64).is_none(), "the history holds every chunk");
        // Loans count as chunks the history will hold: with one chunk of room, a second
        // loan at once is refused rather than its send failing.
        drop(kept.pop());
        let first_loan = channel.loan(64).expect("one chunk of room");
        assert!(channel.loan(64).is_none(), "the room is the first loan's");
        drop(first_loan);
        let mut again = channel
            .loan(64)
            .expect("a dropped loan gives its room back");
        again[0] = 1;
        let (n, k) = channel.send(again).unwrap();
        assert!(!channel.has_room());
        drop((k, n));
        // The reader copied its last one out instead of holding it.
        assert_eq!(reader.held.load(Ordering::Acquire), BORROWED - 1);
        assert!(matches!(got.last(), Some(Taken::Copied(_))));
        assert!(matches!(got.first(), Some(Taken::InPlace(_))));
        kept.remove(0);
        assert!(channel.has_room());
        let mut loan = channel.loan(64).expect("a chunk came back");
        loan[0] = 99;
        // The reader's queue had room: it gets it, copied (it still holds its maximum).
        let (n, _k) = channel.send(loan).unwrap();
        got.clear();
        assert_eq!(reader.take(n).unwrap()[0], 99);
    }

    #[test]
    fn a_chunk_ahead_of_its_data_waits_for_it() {
        let w = guid(3);
        let channel = SampleChannel::create(&w, 64).unwrap();
        let mut reader = ChannelReader::open(&w).unwrap();
        for seq in 1..=3u64 {
            let mut loan = channel.loan(8).unwrap();
            loan[0] = seq as u8;
            drop(channel.send(loan).unwrap());
        }
        assert_eq!(reader.take(2).unwrap()[0], 2, "1 let go on the way");
        assert!(reader.take(2).is_none(), "3 is kept");
        assert_eq!(reader.take(3).unwrap()[0], 3);
    }
}
