//! Resource limits: how much remote peers can make a participant hold, whatever they send.
//!
//! Every table that grows with what the network says has a bound here, with a default
//! that real systems stay well below. What arrives beyond a bound is dropped and counted.
//! Nothing that proved itself is evicted to make room (an attacker could otherwise push out
//! legitimate state); only remote participants that never ran SEDP with us give way to
//! newcomers (see `admission.rs`). `docs/robustness.md` lists each limit, its default and the counter that shows
//! it was reached.

use crate::reader::ReaderConfig;

/// Bounds on what remote participants can make this participant hold.
///
/// Start from [`Limits::default`] and change the fields you need (the struct may gain
/// fields, so it cannot be built with a struct expression outside this crate):
///
/// ```
/// let mut limits = ferrodds_rtps::Limits::default();
/// limits.max_remote_participants = 64;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Remote participants known at once. When the table is full, the announcement of a new
    /// one pushes out the oldest participant that has not yet run SEDP with us
    /// (`DiscoveryStats::participants_evicted`); when every one held has, it is dropped
    /// (`DiscoveryStats::participants_rejected`) until one leaves or its lease expires.
    pub max_remote_participants: usize,
    /// Remote participants announced from one source address that have not yet run SEDP
    /// with us (unverified). A newcomer from that address beyond this pushes out its oldest
    /// unverified one (`DiscoveryStats::participants_evicted`), so that a flood of forged
    /// announcements from one address cannot fill the table.
    pub max_unverified_per_source: usize,
    /// The longest lease an unverified participant is held for, whatever it announced (an
    /// infinite lease from a participant that never ran SEDP is not honoured). Once it runs
    /// SEDP, its announced lease applies.
    pub unverified_lease: std::time::Duration,
    /// Remote endpoints (writers and readers of every remote participant) known at once.
    /// The SEDP announcement of one more is dropped (`DiscoveryStats::endpoints_rejected`).
    pub max_remote_endpoints: usize,
    /// Remote endpoints of any one remote participant, so that one participant cannot take
    /// every slot of `max_remote_endpoints` (`DiscoveryStats::endpoints_rejected`).
    pub max_endpoints_per_participant: usize,
    /// Locators kept per locator list of a remote participant or endpoint; the rest are
    /// dropped (`DiscoveryStats::locators_dropped`).
    pub max_locators: usize,
    /// The largest SPDP or SEDP sample reassembled; discovery data is a parameter list of
    /// a few hundred bytes to a few KiB. Larger ones are dropped
    /// (`ReaderStats::oversized`).
    pub max_discovery_sample_size: usize,
    /// Instances a DCPS reader holds when its RESOURCE_LIMITS QoS leaves `max_instances`
    /// unlimited. A sample of one more instance is rejected (`SampleRejectedStatus`,
    /// reason `InstancesLimit`).
    pub max_instances_per_reader: usize,
    /// Samples per instance a KEEP_ALL DCPS reader holds when its RESOURCE_LIMITS QoS
    /// leaves `max_samples_per_instance` unlimited (KEEP_LAST readers keep their depth).
    /// One more is rejected (reason `SamplesPerInstanceLimit`).
    pub max_samples_per_instance: usize,
    /// Samples a DCPS reader holds when its RESOURCE_LIMITS QoS leaves `max_samples`
    /// unlimited. One more is rejected (reason `SamplesLimit`).
    pub max_samples_per_reader: usize,
    /// The largest sample a reader reassembles from DATA_FRAG; a DATA_FRAG claiming more is
    /// dropped before anything is stored (`ReaderStats::oversized`).
    pub max_sample_size: usize,
    /// Bytes a reader holds in fragments of incomplete samples, counting a fixed overhead
    /// per fragment and per sample beside the fragment bytes. A fragment beyond it is
    /// dropped (`ReaderStats::reassembly_full`) and asked for again later.
    pub max_reassembly_bytes: usize,
    /// Fragments a reader holds for incomplete samples (`ReaderStats::reassembly_full`).
    pub max_reassembly_fragments: usize,
    /// Changes a reliable reader holds ahead of a missing one, per matched writer; one
    /// more is dropped (`ReaderStats::out_of_order_dropped`) and asked for again later.
    pub max_out_of_order: usize,
    /// TypeObjects of remote types held (obtained through the TypeLookup service). Only
    /// types this participant asked for, whose TypeObject hashes to the identifier it asked
    /// for, are stored; beyond this bound a reply's types are dropped
    /// (`TypeLookupStats::types_dropped`).
    pub max_remote_types: usize,
    /// Bytes of remote TypeObjects held (`TypeLookupStats::types_dropped` beyond it).
    pub max_remote_type_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_remote_participants: 1024,
            max_unverified_per_source: 64,
            unverified_lease: std::time::Duration::from_secs(30),
            max_remote_endpoints: 16_384,
            max_endpoints_per_participant: 4096,
            max_locators: 8,
            max_discovery_sample_size: 256 * 1024,
            max_instances_per_reader: 65_536,
            max_samples_per_instance: 65_536,
            max_samples_per_reader: 262_144,
            max_sample_size: 256 * 1024 * 1024,
            max_reassembly_bytes: 512 * 1024 * 1024,
            max_reassembly_fragments: 262_144,
            max_out_of_order: 10_000,
            max_remote_types: 4096,
            max_remote_type_bytes: 16 * 1024 * 1024,
        }
    }
}

impl Limits {
    /// The configuration of a user reader under these limits.
    pub fn reader_config(&self, reliable: bool) -> ReaderConfig {
        ReaderConfig {
            reliable,
            max_sample_size: self.max_sample_size,
            max_reassembly_bytes: self.max_reassembly_bytes,
            max_reassembly_fragments: self.max_reassembly_fragments,
            max_out_of_order: self.max_out_of_order,
            resume_rematched: true,
            ..ReaderConfig::default()
        }
    }

    /// The configuration of a builtin (SPDP or SEDP) reader under these limits: samples up
    /// to `max_discovery_sample_size`, and room to reassemble a few of them at once.
    pub fn discovery_reader_config(&self, reliable: bool) -> ReaderConfig {
        let size = self.max_discovery_sample_size;
        ReaderConfig {
            reliable,
            max_sample_size: size,
            max_reassembly_bytes: size.saturating_mul(4),
            max_reassembly_fragments: self.max_reassembly_fragments,
            max_out_of_order: self.max_out_of_order,
            ..ReaderConfig::default()
        }
    }
}
