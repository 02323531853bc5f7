//! A participant's endpoints and the routing of received submessages to them.
//!
//! The driver hands every datagram to [`Participant::handle_datagram`] with the address it
//! came from, calls [`Participant::handle_timeout`] when [`Participant::poll_timeout`] says
//! so, and sends what [`Participant::poll_transmit`] gives. Matching endpoints is
//! discovery's job; it calls the writers' and readers' `match_*` methods. The participant
//! also holds the [`Limits`] that its endpoints and the discovery engine apply.

use std::collections::BTreeMap;

use crate::limits::Limits;
use crate::reader::{Reader, ReaderStats};
use crate::receiver::{walk, Context};
use crate::time::{earliest, Timestamp};
use crate::transmit::Transmit;
use crate::wire::{EntityId, Guid, GuidPrefix, Locator, MessageError, Submessage};
use crate::writer::{Writer, WriterStats};

/// Counters of what arrived.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReceiveStats {
    /// Datagrams handled.
    pub datagrams: u64,
    /// Datagrams dropped whole: not RTPS, or a bad header.
    pub bad_datagrams: u64,
    /// Datagrams whose walk ended at a malformed submessage.
    pub malformed: u64,
    /// Submessages skipped as not understood.
    pub not_understood: u64,
    /// Submessages for another participant (INFO_DST), or for no local endpoint. (A driver
    /// whose participants share a way in, and skip the datagrams INFO_DST gives wholly
    /// to another, adds those datagrams here.)
    pub not_for_us: u64,
    /// Datagrams from this participant itself (local matches, multicast loop-back).
    pub own: u64,
    /// Datagrams longer than the receive buffer, dropped whole by the driver.
    pub truncated: u64,
}

/// A participant's local writers and readers, without I/O.
#[derive(Debug)]
pub struct Participant {
    prefix: GuidPrefix,
    writers: BTreeMap<EntityId, Writer>,
    readers: BTreeMap<EntityId, Reader>,
    stats: ReceiveStats,
    limits: Limits,
    /// Counts of endpoints removed, so that totals never go down.
    retired_readers: ReaderStats,
    retired_writers: WriterStats,
    /// Remote participants heard from on a builtin endpoint other than SPDP since discovery
    /// last looked ([`Participant::take_contacts`]): proof that they run SEDP with us.
    contacts: Vec<GuidPrefix>,
    /// The readers submessages were routed to since [`Participant::take_touched_readers`]
    /// was last called: only they can have delivered changes or counted losses.
    touched_readers: Vec<EntityId>,
    /// Kept between datagrams for its allocation (see [`RouteNotes::answering`]).
    answering: Vec<EntityId>,
}

/// What routing notes down besides handing submessages over.
struct RouteNotes<'a> {
    contacts: &'a mut Vec<GuidPrefix>,
    touched: &'a mut Vec<EntityId>,
    /// Readers a HEARTBEAT of this datagram may have made owe an answer: answered once
    /// the whole datagram is in.
    answering: &'a mut Vec<EntityId>,
}

impl Participant {
    /// A participant with GUID prefix `prefix` and the default [`Limits`].
    pub fn new(prefix: GuidPrefix) -> Self {
        Self::with_limits(prefix, Limits::default())
    }

    /// A participant with GUID prefix `prefix` and the given limits (the discovery engine
    /// and the driver read them from here when they create endpoints).
    pub fn with_limits(prefix: GuidPrefix, limits: Limits) -> Self {
        Self {
            prefix,
            writers: BTreeMap::new(),
            readers: BTreeMap::new(),
            stats: ReceiveStats::default(),
            limits,
            retired_readers: ReaderStats::default(),
            retired_writers: WriterStats::default(),
            contacts: Vec::new(),
            touched_readers: Vec::new(),
            answering: Vec::new(),
        }
    }

    /// The resource limits.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The counts of every reader, summed (endpoints removed included).
    pub fn reader_stats(&self) -> ReaderStats {
        let mut total = self.retired_readers;
        for r in self.readers.values() {
            total.add(&r.stats());
        }
        total
    }

    /// The counts of every writer, summed (endpoints removed included).
    pub fn writer_stats(&self) -> WriterStats {
        let mut total = self.retired_writers;
        for w in self.writers.values() {
            add_writer_stats(&mut total, &w.stats());
        }
        total
    }

    /// The GUID prefix.
    pub fn prefix(&self) -> GuidPrefix {
        self.prefix
    }

    /// What arrived, counted.
    pub fn stats(&self) -> ReceiveStats {
        self.stats
    }

    /// Adds a writer (its GUID prefix must be the participant's).
    pub fn add_writer(&mut self, writer: Writer) {
        self.writers.insert(writer.guid().entity_id, writer);
    }

    /// Adds a reader (its GUID prefix must be the participant's).
    pub fn add_reader(&mut self, reader: Reader) {
        self.readers.insert(reader.guid().entity_id, reader);
    }

    /// A writer by entity id.
    pub fn writer(&mut self, id: EntityId) -> Option<&mut Writer> {
        self.writers.get_mut(&id)
    }

    /// A reader by entity id.
    pub fn reader(&mut self, id: EntityId) -> Option<&mut Reader> {
        self.readers.get_mut(&id)
    }

    /// The local reader `id`, to look at.
    pub fn reader_ref(&self, id: EntityId) -> Option<&Reader> {
        self.readers.get(&id)
    }

    /// Removes a writer.
    pub fn remove_writer(&mut self, id: EntityId) -> Option<Writer> {
        let w = self.writers.remove(&id)?;
        add_writer_stats(&mut self.retired_writers, &w.stats());
        Some(w)
    }

    /// Removes a reader.
    pub fn remove_reader(&mut self, id: EntityId) -> Option<Reader> {
        let r = self.readers.remove(&id)?;
        self.retired_readers.add(&r.stats());
        Some(r)
    }

    /// Handles a datagram received from `origin` (the UDP source address, or
    /// [`Locator::INVALID`] when the transport does not know it). Discovery uses the
    /// origin to decide which locators a remote participant may be reached at.
    pub fn handle_datagram(&mut self, now: Timestamp, origin: Locator, datagram: &[u8]) {
        self.stats.datagrams += 1;
        let prefix = self.prefix;
        let writers = &mut self.writers;
        let readers = &mut self.readers;
        let mut answering = std::mem::take(&mut self.answering);
        let mut notes = RouteNotes {
            contacts: &mut self.contacts,
            touched: &mut self.touched_readers,
            answering: &mut answering,
        };
        let mut not_for_us = 0u64;
        let mut own = false;
        let result = walk(datagram, |ctx: &Context, sm| {
            // Our own traffic comes back when a local writer serves a local reader (or
            // multicast loops back): it is routed like any other, and discovery ignores its
            // own announcements.
            if ctx.source == prefix {
                own = true;
            }
            if ctx.destination != GuidPrefix::UNKNOWN && ctx.destination != prefix {
                not_for_us += 1;
                return;
            }
            let routed = route(now, origin, ctx, sm, writers, readers, &mut notes);
            if !routed {
                not_for_us += 1;
            }
        });
        self.stats.not_for_us += not_for_us;
        // What the datagram's HEARTBEATs asked for, in one ACKNACK per writer.
        for id in answering.drain(..) {
            if let Some(r) = self.readers.get_mut(&id) {
                r.handle_timeout(now);
            }
        }
        self.answering = answering;
        match result {
            Ok((_, walk)) => {
                if own {
                    self.stats.own += 1;
                }
                self.stats.not_understood += walk.not_understood as u64;
                if walk.malformed {
                    self.stats.malformed += 1;
                }
            }
            Err(MessageError::ConnextPing) => {}
            Err(_) => self.stats.bad_datagrams += 1,
        }
    }

    /// Counts a datagram the driver dropped because it did not fit its receive buffer.
    pub fn count_truncated(&mut self) {
        self.stats.datagrams += 1;
        self.stats.truncated += 1;
    }

    /// The remote participants that sent a builtin endpoint of ours (SEDP) something it was
    /// matched to receive since the last call: discovery's proof that a participant it only
    /// heard announce itself really runs the protocol with us.
    pub fn take_contacts(&mut self) -> Vec<GuidPrefix> {
        let mut contacts = std::mem::take(&mut self.contacts);
        contacts.dedup();
        contacts
    }

    /// Moves into `out` the ids of the readers submessages were routed to since the last
    /// call (each once): the only ones that can have delivered changes or counted losses,
    /// so a driver looks at them rather than at every reader after each datagram.
    pub fn take_touched_readers(&mut self, out: &mut Vec<EntityId>) {
        for id in self.touched_readers.drain(..) {
            if let Some(r) = self.readers.get_mut(&id) {
                r.touched = false;
                out.push(id);
            }
        }
    }

    /// Runs the endpoints' timers that are due.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        for w in self.writers.values_mut() {
            w.handle_timeout(now);
        }
        for r in self.readers.values_mut() {
            r.handle_timeout(now);
        }
    }

    /// The earliest time an endpoint has work.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        let w = self.writers.values().filter_map(Writer::poll_timeout).min();
        let r = self.readers.values().filter_map(Reader::poll_timeout).min();
        earliest(w, r)
    }

    /// When writer `id` next has work.
    pub fn writer_timeout(&self, id: EntityId) -> Option<Timestamp> {
        self.writers.get(&id).and_then(Writer::poll_timeout)
    }

    /// The next datagram any endpoint wants sent.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        for w in self.writers.values_mut() {
            if let Some(t) = w.poll_transmit() {
                return Some(t);
            }
        }
        for r in self.readers.values_mut() {
            if let Some(t) = r.poll_transmit() {
                return Some(t);
            }
        }
        None
    }
}

/// Hands one submessage to the endpoint(s) it is for; false when there is none.
fn route(
    now: Timestamp,
    origin: Locator,
    ctx: &Context,
    sm: Submessage<'_>,
    writers: &mut BTreeMap<EntityId, Writer>,
    readers: &mut BTreeMap<EntityId, Reader>,
    notes: &mut RouteNotes<'_>,
) -> bool {
    let RouteNotes {
        contacts,
        touched,
        answering,
    } = notes;
    // Reader-bound submessages go to the addressed reader, or to every reader matched with
    // the writer when addressed to ENTITYID_UNKNOWN.
    let mut to_readers = |reader_id: EntityId,
                          writer_id: EntityId,
                          readers: &mut BTreeMap<EntityId, Reader>,
                          f: &mut dyn FnMut(&mut Reader)| {
        let writer = Guid::new(ctx.source, writer_id);
        let mut any = false;
        if reader_id == EntityId::UNKNOWN {
            for r in readers
                .values_mut()
                .filter(|r| r.is_matched(writer) || r.accepts_unmatched(writer_id))
            {
                let id = r.guid().entity_id;
                if id.is_builtin() {
                    note_contact(contacts, ctx.source, true, id);
                }
                f(r);
                if !std::mem::replace(&mut r.touched, true) {
                    touched.push(id);
                }
                any = true;
            }
        } else if let Some(r) = readers
            .get_mut(&reader_id)
            .filter(|r| !r.config().stateless || r.accepts_unmatched(writer_id))
        {
            if reader_id.is_builtin() {
                note_contact(contacts, ctx.source, r.is_matched(writer), reader_id);
            }
            f(r);
            if !std::mem::replace(&mut r.touched, true) {
                touched.push(reader_id);
            }
            any = true;
        }
        any
    };
    match sm {
        Submessage::Data(d) => to_readers(d.reader_id, d.writer_id, readers, &mut |r| {
            r.handle_data(now, (ctx.source, ctx.vendor), origin, ctx.timestamp, &d)
        }),
        Submessage::DataFrag(d) => to_readers(d.reader_id, d.writer_id, readers, &mut |r| {
            r.handle_data_frag(now, ctx.source, origin, ctx.timestamp, &d, ctx.vendor)
        }),
        Submessage::Heartbeat(h) => to_readers(h.reader_id, h.writer_id, readers, &mut |r| {
            r.handle_heartbeat(now, ctx.source, &h);
            let id = r.guid().entity_id;
            if !answering.contains(&id) {
                answering.push(id);
            }
        }),
        Submessage::HeartbeatFrag(h) => to_readers(h.reader_id, h.writer_id, readers, &mut |r| {
            r.handle_heartbeat_frag(now, ctx.source, &h);
            let id = r.guid().entity_id;
            if !answering.contains(&id) {
                answering.push(id);
            }
        }),
        Submessage::Gap(g) => to_readers(g.reader_id, g.writer_id, readers, &mut |r| {
            r.handle_gap(now, ctx.source, &g)
        }),
        Submessage::AckNack(a) => match writers.get_mut(&a.writer_id) {
            Some(w) => {
                if a.writer_id.is_builtin() {
                    let reader = Guid::new(ctx.source, a.reader_id);
                    let matched = w.matched_readers().any(|r| r.guid == reader);
                    note_contact(contacts, ctx.source, matched, a.writer_id);
                }
                w.handle_acknack(now, ctx.source, &a);
                true
            }
            None => false,
        },
        Submessage::NackFrag(n) => match writers.get_mut(&n.writer_id) {
            Some(w) => {
                w.handle_nack_frag(now, ctx.source, &n);
                true
            }
            None => false,
        },
        _ => false,
    }
}

/// Notes that `source` reached our builtin endpoint `local` from a remote endpoint `matched`
/// with it. The SPDP reader does not count: it takes anyone's announcements.
fn note_contact(
    contacts: &mut Vec<GuidPrefix>,
    source: GuidPrefix,
    matched: bool,
    local: EntityId,
) {
    if matched
        && local.key() != EntityId::SPDP_PARTICIPANT_READER.key()
        && contacts.last() != Some(&source)
    {
        contacts.push(source);
    }
}

/// Adds `other`'s counts to `total` (saturating).
fn add_writer_stats(total: &mut WriterStats, other: &WriterStats) {
    let add = |a: &mut u64, b: u64| *a = a.saturating_add(b);
    add(&mut total.written, other.written);
    add(&mut total.resent, other.resent);
    add(&mut total.fragments_resent, other.fragments_resent);
    add(&mut total.gaps, other.gaps);
    add(&mut total.heartbeats, other.heartbeats);
    add(&mut total.ignored_acknacks, other.ignored_acknacks);
    add(&mut total.paced_fragments, other.paced_fragments);
    add(&mut total.filtered, other.filtered);
}
