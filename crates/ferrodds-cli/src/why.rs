//! `ferrodds why TOPIC`: "discovery works but no data — why?". Joins the domain, listens to
//! discovery, and for every writer/reader pair of the topic says whether they match and, if
//! not, every reason with both sides' values and the fix (`DomainParticipant::diagnose_topic`,
//! which applies discovery's own matching rules). When the topic has no endpoint it names the
//! topics that look like it; when nothing at all was discovered it says what was tried:
//! domain, interface, ports, multicast, peers.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::net::Ipv4Addr;
use std::time::Duration;

use clap::Args;
use ferrodds::{DomainParticipant, EndpointKind, Obstacle, TopicDiagnosis, TopicEndpoint};
use ferrodds_transport::{list_interfaces, NetworkInterface, PortMapping, TransportConfig};

use crate::tools::{qos_text, vendor_name, Join};

/// `ferrodds why`.
#[derive(Args, Clone, Debug)]
pub(crate) struct WhyArgs {
    /// The topic.
    topic: String,
    #[command(flatten)]
    join: Join,
    /// How long to listen to discovery before judging, in seconds.
    #[arg(long, default_value_t = 3.0)]
    duration: f64,
    /// How long to wait for the types endpoints described (TypeLookup), in seconds.
    #[arg(long, default_value_t = 3.0)]
    type_wait: f64,
}

pub(crate) fn run(args: &WhyArgs) -> Result<(), String> {
    let listen = crate::tools::seconds(args.duration, "--duration")?;
    let type_wait = crate::tools::seconds(args.type_wait, "--type-wait")?;
    let p = args.join.participant()?;
    if std::io::stderr().is_terminal() {
        eprintln!(
            "listening to domain {} for {:.1} s…",
            args.join.domain,
            listen.as_secs_f64()
        );
    }
    std::thread::sleep(listen);
    let diagnosis = p
        .diagnose_topic(&args.topic, type_wait)
        .map_err(|e| format!("topic {}: {e}", args.topic))?;
    print!("{}", report(&p, &args.topic, &diagnosis, listen));
    Ok(())
}

fn guid_text(e: &TopicEndpoint) -> String {
    let g = e.data.guid;
    let hex = |b: &[u8]| b.iter().map(|b| format!("{b:02x}")).collect::<String>();
    format!("{}:{}", hex(&g.prefix.0), hex(&g.entity_id.0))
}

fn describe(e: &TopicEndpoint) -> String {
    let side = match e.kind {
        EndpointKind::Writer => "writer",
        EndpointKind::Reader => "reader",
    };
    let owner = if e.local {
        "this participant".to_owned()
    } else {
        vendor_name(e.vendor)
    };
    format!(
        "{side} {}  {owner}  type {}{}  {}",
        guid_text(e),
        e.data.type_name,
        if e.describes_type {
            ""
        } else {
            " (no type information)"
        },
        qos_text(&e.data.qos)
    )
}

/// The whole answer, as text.
fn report(p: &DomainParticipant, topic: &str, d: &TopicDiagnosis, listened: Duration) -> String {
    let mut out = String::new();
    let writers = d
        .endpoints
        .iter()
        .filter(|e| e.kind == EndpointKind::Writer)
        .count();
    let readers = d.endpoints.len() - writers;
    if d.endpoints.is_empty() {
        nothing_on_topic(&mut out, p, topic, listened);
        return out;
    }
    let _ = writeln!(
        out,
        "topic {topic}: {writers} writer(s), {readers} reader(s)"
    );
    for e in &d.endpoints {
        let _ = writeln!(out, "  {}", describe(e));
    }
    let missing = match (writers, readers) {
        (0, _) => Some(("writes", "writer")),
        (_, 0) => Some(("reads", "reader")),
        _ => None,
    };
    if let Some((does, side)) = missing {
        let _ = writeln!(
            out,
            "no data: nobody {does} {topic}; start a {side} of it (same domain, topic name \
             spelled exactly so)"
        );
        return out;
    }
    let mut matched = 0;
    for pair in &d.pairs {
        let (Some(w), Some(r)) = (d.endpoint(pair.writer), d.endpoint(pair.reader)) else {
            continue;
        };
        let names = format!("writer {} → reader {}", guid_text(w), guid_text(r));
        if pair.obstacles.is_empty() {
            matched += 1;
            let _ = writeln!(out, "{names}: they match");
            continue;
        }
        let _ = writeln!(out, "{names}: they do not match");
        for o in &pair.obstacles {
            let _ = writeln!(out, "  - {o}");
            let _ = writeln!(out, "    fix: {}", o.fix());
        }
        if pair
            .obstacles
            .iter()
            .all(|o| matches!(o, Obstacle::Partition { .. } | Obstacle::TypeName { .. }))
        {
            let _ = writeln!(
                out,
                "    (partitions and type names that differ are not errors to either side: \
                 no incompatible-QoS status is raised, the endpoints just never meet)"
            );
        }
    }
    let _ = writeln!(
        out,
        "{matched} of {} writer/reader pairs match",
        d.pairs.len()
    );
    out
}

/// The topic has no endpoint: topics with a similar name, or, with nothing discovered at
/// all, what was tried.
fn nothing_on_topic(out: &mut String, p: &DomainParticipant, topic: &str, listened: Duration) {
    let participants = p.discovered_participant_data();
    let topics: BTreeSet<String> = p
        .discovered_endpoints()
        .into_iter()
        .map(|e| e.data.topic_name)
        .collect();
    if participants.is_empty() {
        nothing_discovered(out, p, listened);
        return;
    }
    let _ = writeln!(
        out,
        "no endpoint of topic {topic} among the {} participant(s) discovered ({} topic(s))",
        participants.len(),
        topics.len()
    );
    let similar: Vec<&String> = topics.iter().filter(|t| similar(t, topic)).collect();
    if similar.is_empty() {
        let _ = writeln!(out, "topics there: {}", join(topics.iter()));
    } else {
        let _ = writeln!(
            out,
            "did you mean {}? (topic names must match exactly, case included)",
            join(similar.into_iter())
        );
    }
}

fn join<'a>(names: impl Iterator<Item = &'a String>) -> String {
    names
        .map(|n| format!("{n:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Names that differ only in case, a ROS 2 prefix (`rt/`), or at most two edits.
fn similar(a: &str, b: &str) -> bool {
    let strip = |s: &str| {
        s.strip_prefix("rt/")
            .unwrap_or(s)
            .trim_start_matches('/')
            .to_lowercase()
    };
    let (a, b) = (strip(a), strip(b));
    a == b || edit_distance(&a, &b) <= 2
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            let next = (row[j + 1] + 1).min(row[j] + 1).min(prev + cost);
            prev = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// Nobody answered: the domain, interface, ports, multicast and peers this participant used.
fn nothing_discovered(out: &mut String, p: &DomainParticipant, listened: Duration) {
    let domain = p.domain_id();
    let _ = writeln!(
        out,
        "no participant discovered on domain {domain} in {:.1} s",
        listened.as_secs_f64()
    );
    let config = TransportConfig::from_env().ok();
    let address = p.metatraffic_address();
    let interface = address.and_then(|a| {
        list_interfaces()
            .ok()?
            .into_iter()
            .find(|i| i.address == *a.ip())
    });
    match (&interface, address) {
        (Some(i), Some(a)) => {
            let _ = writeln!(
                out,
                "tried: interface {} ({}), unicast discovery on port {}",
                i.name,
                i.address,
                a.port()
            );
        }
        (None, Some(a)) => {
            let _ = writeln!(out, "tried: address {}, port {}", a.ip(), a.port());
        }
        _ => {}
    }
    let ports = PortMapping::DEFAULT;
    let group = config
        .as_ref()
        .map_or(ferrodds_transport::DEFAULT_MULTICAST_GROUP, |c| {
            c.multicast_group()
        });
    if let Ok(port) = ports.spdp_multicast_port(domain) {
        let multicast_allowed = config.as_ref().is_none_or(|c| c.allow_multicast());
        if !multicast_allowed {
            let _ = writeln!(
                out,
                "multicast is off in the configuration: participants are found only through \
                 the peers listed"
            );
        } else if interface.as_ref().is_some_and(|i| !i.multicast) {
            let name = interface.as_ref().map_or("", |i| i.name.as_str());
            let _ = writeln!(
                out,
                "interface {name} does not do multicast, so SPDP went only to this host's \
                 participant ports there, not to {group}:{port}: participants of other hosts \
                 cannot be found (`ip link set {name} multicast on`, or list them as peers)"
            );
        } else {
            let _ = writeln!(out, "SPDP announcements went to {group}:{port} (multicast)");
        }
    }
    let peers = config.as_ref().map_or(&[][..], |c| c.peers());
    if !peers.is_empty() {
        let _ = writeln!(
            out,
            "and to the peers: {}",
            peers
                .iter()
                .map(|peer| peer.host().to_owned())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let _ = writeln!(
        out,
        "check: the others use domain {domain} (each domain has its own ports); they are on a \
         network this interface reaches (`--interface`); no firewall drops UDP to ports \
         {}–{} here or there",
        ports.spdp_multicast_port(domain).unwrap_or(0),
        ports
            .spdp_multicast_port(domain)
            .map_or(0, |p| p.saturating_add(249))
    );
    if interface
        .as_ref()
        .is_some_and(|i| i.address == Ipv4Addr::LOCALHOST)
    {
        let _ = writeln!(
            out,
            "note: on the loopback interface only participants of this host can be found"
        );
    }
    other_interfaces(out, interface.as_ref());
}

/// The host's interfaces this participant did not use: the others may be on one of their
/// networks, with no interface in common with this one.
fn other_interfaces(out: &mut String, used: Option<&NetworkInterface>) {
    let Ok(all) = list_interfaces() else {
        return;
    };
    let others: Vec<NetworkInterface> = all
        .into_iter()
        .filter(|i| i.up && used.is_none_or(|u| u.name != i.name))
        .collect();
    if others.is_empty() {
        return;
    }
    let used = used.map_or("this interface", |u| u.name.as_str());
    let _ = writeln!(
        out,
        "no common interface? {used} reaches none of the networks of this host's other \
         interfaces:"
    );
    for i in &others {
        let prefix = i
            .netmask
            .map(|m| format!("/{}", u32::from(m).count_ones()))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {} {}{prefix}{}{} — `--interface {}`",
            i.name,
            i.address,
            if i.loopback { ", loopback" } else { "" },
            if i.multicast { ", multicast" } else { "" },
            i.name
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn similar_names_are_found_and_others_are_not() {
        assert!(similar("Square", "square"));
        assert!(similar("rt/chatter", "chatter"));
        assert!(similar("Circel", "Circle"));
        assert!(!similar("Square", "Triangle"));
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "ab"), 2);
    }
}
