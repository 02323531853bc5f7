//! The tools DDS users live in, for topics whose types this program has no code for:
//!
//! - `ferrodds ls`: the participants of a domain, with their vendors and locators, and the
//!   topics their endpoints publish and subscribe, with types and QoS (as `cyclonedds ls`
//!   and `ps` show them);
//! - `ferrodds typeof TOPIC`: the topic's type as IDL, obtained from its endpoints over
//!   XTypes TypeLookup;
//! - `ferrodds echo TOPIC`: its samples as JSON lines, read with that type;
//! - `ferrodds pub TOPIC [JSON]...`: samples written from JSON (the arguments, or the lines
//!   of standard input), typed by what the topic's endpoints announced.
//!
//! Each joins the domain as a participant of its own, which the others see come and go.

use std::collections::BTreeMap;
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;
use ferrodds::dynamic::to_idl;
use ferrodds::dynamic::{DynamicValue, JsonTextError};
use ferrodds::qos::{DataRepresentationId, EndpointQos};
use ferrodds::qos::{Durability, History, ReliabilityKind};
use ferrodds::{
    DiscoveredEndpoint, DomainParticipant, DynamicTopic, EndpointKind, ParticipantData, Qos,
    VendorId,
};
use serde_json::{json, Value};

/// Where a tool joins.
#[derive(Args, Clone, Debug)]
pub(crate) struct Join {
    /// DDS domain id.
    #[arg(long, short, default_value_t = 0)]
    pub(crate) domain: u32,
    /// Network interface (name or address); without it, FERRODDS_CONFIG's or the default.
    #[arg(long, short)]
    interface: Option<String>,
}

impl Join {
    pub(crate) fn participant(&self) -> Result<DomainParticipant, String> {
        let mut b = DomainParticipant::builder()
            .map_err(|e| e.to_string())?
            .domain_id(self.domain);
        if let Some(i) = &self.interface {
            b = b.interface(i).map_err(|e| e.to_string())?;
        }
        b.build().map_err(|e| e.to_string())
    }
}

/// Where `echo` and `pub` take the topic's type from: discovery (what the topic's endpoints
/// described, over TypeLookup), or an IDL file.
#[derive(Args, Clone, Debug)]
pub(crate) struct TypeSource {
    /// Take the type from this IDL file instead of from the topic's endpoints (with
    /// `--type`): for peers that do not describe their types.
    #[arg(long, requires = "type_name")]
    idl: Option<PathBuf>,
    /// The type in the IDL file, by its scoped name (`a::b::C`).
    #[arg(long = "type", requires = "idl")]
    type_name: Option<String>,
    /// A directory the IDL file's `#include`s are looked for in (repeatable).
    #[arg(short = 'I', long = "include")]
    include: Vec<PathBuf>,
}

impl TypeSource {
    /// The topic `name`, typed from the IDL file if one was given, else from discovery
    /// (waiting up to `timeout`).
    fn topic(
        &self,
        p: &DomainParticipant,
        name: &str,
        timeout: Duration,
    ) -> Result<DynamicTopic, String> {
        let (Some(file), Some(type_name)) = (&self.idl, &self.type_name) else {
            return p
                .find_topic(name, timeout)
                .map_err(|e| format!("topic {name}: {e} (--idl FILE --type NAME gives the type)"));
        };
        let mut compiler = ferrodds_idl::Compiler::new();
        for dir in &self.include {
            compiler = compiler.include_dir(dir);
        }
        let spec = compiler.parse(&[file]).map_err(|e| e.to_string())?;
        let ty = ferrodds_idl::dynamic::dynamic_type(&spec, type_name)
            .map_err(|e| format!("{}: {e}", file.display()))?;
        let wire_name = type_name.trim_start_matches("::");
        p.create_dynamic_topic(name, wire_name, ty)
            .map_err(|e| format!("topic {name}: {e}"))
    }
}

/// `ferrodds ls`.
#[derive(Args, Clone, Debug)]
pub(crate) struct LsArgs {
    #[command(flatten)]
    join: Join,
    /// How long to listen to discovery before printing, in seconds.
    #[arg(long, default_value_t = 2.0)]
    duration: f64,
    /// One JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// `ferrodds typeof`.
#[derive(Args, Clone, Debug)]
pub(crate) struct TypeofArgs {
    /// The topic.
    topic: String,
    #[command(flatten)]
    join: Join,
    /// How long to wait for an endpoint of the topic and its type, in seconds.
    #[arg(long, default_value_t = 10.0)]
    timeout: f64,
}

/// `ferrodds echo`.
#[derive(Args, Clone, Debug)]
pub(crate) struct EchoArgs {
    /// The topic.
    topic: String,
    #[command(flatten)]
    join: Join,
    #[command(flatten)]
    type_source: TypeSource,
    /// Stop after this many samples (0: no limit).
    #[arg(long, short = 'n', default_value_t = 0)]
    count: u64,
    /// Stop after this many seconds (0: no limit).
    #[arg(long, default_value_t = 0.0)]
    duration: f64,
    /// How long to wait for an endpoint of the topic and its type, in seconds.
    #[arg(long, default_value_t = 10.0)]
    timeout: f64,
    /// Read reliably (default: reliably when every writer found is reliable).
    #[arg(long, conflicts_with = "best_effort")]
    reliable: bool,
    /// Read best-effort.
    #[arg(long)]
    best_effort: bool,
    /// Ask for the samples writers keep for late joiners (default: when every writer found
    /// keeps them).
    #[arg(long, conflicts_with = "volatile")]
    transient_local: bool,
    /// Only samples written from now on.
    #[arg(long)]
    volatile: bool,
    /// A partition to read in (repeatable; default: the writers' partitions).
    #[arg(long)]
    partition: Vec<String>,
}

/// `ferrodds pub`.
#[derive(Args, Clone, Debug)]
pub(crate) struct PubArgs {
    /// The topic.
    topic: String,
    /// Samples as JSON objects (the JSON view `echo` prints); without any, one per line of
    /// standard input.
    samples: Vec<String>,
    #[command(flatten)]
    join: Join,
    #[command(flatten)]
    type_source: TypeSource,
    /// How long to wait for an endpoint of the topic and its type, in seconds.
    #[arg(long, default_value_t = 10.0)]
    timeout: f64,
    /// Wait up to this many seconds for a reader before writing, and as long for the
    /// readers to acknowledge what was written before exiting.
    #[arg(long, default_value_t = 5.0)]
    wait: f64,
    /// Write best-effort (default: reliably, which every reader accepts).
    #[arg(long)]
    best_effort: bool,
    /// Keep nothing for late joiners (default: transient-local, which every reader
    /// accepts; late joiners get the samples while this program runs).
    #[arg(long)]
    volatile: bool,
    /// A partition to write in (repeatable; default: the readers' partitions).
    #[arg(long)]
    partition: Vec<String>,
    /// Dispose the instances the samples name instead of writing them.
    #[arg(long)]
    dispose: bool,
    /// Seconds between samples.
    #[arg(long, default_value_t = 0.0)]
    interval: f64,
    /// The data representation, 1 (XCDR1) or 2 (XCDR2); default: XCDR2 unless a reader
    /// found accepts only XCDR1 (Fast DDS 2.9, RTI Connext by default).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=2))]
    xcdr: Option<u8>,
}

pub(crate) fn seconds(s: f64, what: &str) -> Result<Duration, String> {
    Duration::try_from_secs_f64(s).map_err(|_| format!("{what}: {s} is not a number of seconds"))
}

/// A vendor's product name, or its id.
pub(crate) fn vendor_name(vendor: Option<VendorId>) -> String {
    match vendor {
        Some(v) => v
            .name()
            .map_or_else(|| format!("vendor {:04x}", v.to_u16()), str::to_owned),
        None => "unknown vendor".into(),
    }
}

fn vendor(p: &ParticipantData) -> String {
    vendor_name(p.vendor_id)
}

/// The QoS `ls` and `why` show of an endpoint: reliability, durability, history,
/// partitions.
pub(crate) fn qos_text(q: &EndpointQos) -> String {
    qos_line(&qos_json(q))
}

/// [`qos_text`] from the JSON `ls --json` prints.
fn qos_line(v: &Value) -> String {
    let partition = strs(&v["partition"]);
    format!(
        "{}, {}, {}{}",
        v["reliability"].as_str().unwrap_or(""),
        v["durability"].as_str().unwrap_or(""),
        v["history"].as_str().unwrap_or(""),
        if partition.is_empty() {
            String::new()
        } else {
            format!(", partition {}", partition.join(","))
        }
    )
}

/// The strings of a JSON array (none for anything else).
fn strs(v: &Value) -> Vec<&str> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The addresses of the participant's UDPv4 unicast locators, each once: where it runs.
fn hosts(d: &ParticipantData) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    d.default_unicast_locators
        .iter()
        .chain(&d.metatraffic_unicast_locators)
        .filter_map(|l| l.as_udpv4())
        .map(|a| a.ip().to_string())
        .filter(|a| seen.insert(a.clone()))
        .collect()
}

/// The participant's unicast locators, each once, as text.
fn locators(d: &ParticipantData) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    d.default_unicast_locators
        .iter()
        .chain(&d.metatraffic_unicast_locators)
        .filter(|l| seen.insert(**l))
        .map(ToString::to_string)
        .collect()
}

fn guid_text(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn qos_json(q: &EndpointQos) -> Value {
    json!({
        "reliability": match q.reliability.kind {
            ReliabilityKind::Reliable => "reliable",
            ReliabilityKind::BestEffort => "best-effort",
        },
        "durability": match q.durability {
            Durability::Volatile => "volatile",
            Durability::TransientLocal => "transient-local",
            Durability::Transient => "transient",
            Durability::Persistent => "persistent",
        },
        "history": match q.history {
            History::KeepLast { depth } => format!("keep-last {depth}"),
            History::KeepAll => "keep-all".into(),
        },
        "partition": q.partition.names,
    })
}

/// What `ls` prints, as JSON (the text form is made from it).
fn listing(p: &DomainParticipant) -> Value {
    let participants: Vec<Value> = p
        .discovered_participant_data()
        .iter()
        .map(|d| {
            json!({
                "guid_prefix": guid_text(&d.guid.prefix.0),
                "vendor": vendor(d),
                "name": d.entity_name,
                "hosts": hosts(d),
                "locators": locators(d),
                "lease_s": d.lease_duration.to_std().map(|d| d.as_secs_f64()),
            })
        })
        .collect();
    let mut topics: BTreeMap<String, Vec<&DiscoveredEndpoint>> = BTreeMap::new();
    let endpoints = p.discovered_endpoints();
    for e in &endpoints {
        topics.entry(e.data.topic_name.clone()).or_default().push(e);
    }
    let topics: Vec<Value> = topics
        .iter()
        .map(|(name, eps)| {
            let mut types: Vec<&str> = eps.iter().map(|e| e.data.type_name.as_str()).collect();
            types.sort_unstable();
            types.dedup();
            let count = |k: EndpointKind| eps.iter().filter(|e| e.kind == k).count();
            json!({
                "topic": name,
                "types": types,
                "writers": count(EndpointKind::Writer),
                "readers": count(EndpointKind::Reader),
                "endpoints": eps.iter().map(|e| json!({
                    "kind": match e.kind {
                        EndpointKind::Writer => "writer",
                        EndpointKind::Reader => "reader",
                    },
                    "guid": format!("{}:{}", guid_text(&e.data.guid.prefix.0),
                        guid_text(&e.data.guid.entity_id.0)),
                    "type": e.data.type_name,
                    "describes_type": e.describes_type,
                    "qos": qos_json(&e.data.qos),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({ "participants": participants, "topics": topics })
}

/// `ferrodds ls`: listens to discovery for `--duration`, then prints what it found.
pub(crate) fn ls(args: &LsArgs) -> Result<(), String> {
    let wait = seconds(args.duration, "--duration")?;
    let p = args.join.participant()?;
    let progress = std::io::stderr().is_terminal();
    if progress {
        eprint!(
            "listening to domain {} for {:.1} s…",
            args.join.domain,
            wait.as_secs_f64()
        );
    }
    std::thread::sleep(wait);
    if progress {
        eprintln!();
    }
    let all = listing(&p);
    let mut out = std::io::stdout().lock();
    if args.json {
        let _ = writeln!(out, "{all}");
        return Ok(());
    }
    let empty = Vec::new();
    let participants = all["participants"].as_array().unwrap_or(&empty);
    let _ = writeln!(out, "participants ({}):", participants.len());
    for d in participants {
        let name = d["name"]
            .as_str()
            .map_or(String::new(), |n| format!("  \"{n}\""));
        let (locators, hosts) = (strs(&d["locators"]), strs(&d["hosts"]));
        let _ = writeln!(
            out,
            "  {}  {}{name}  host {}  {}",
            d["guid_prefix"].as_str().unwrap_or(""),
            d["vendor"].as_str().unwrap_or(""),
            hosts.join(","),
            locators.join(" ")
        );
    }
    let topics = all["topics"].as_array().unwrap_or(&empty);
    let _ = writeln!(out, "topics ({}):", topics.len());
    for t in topics {
        let types = strs(&t["types"]);
        let _ = writeln!(
            out,
            "  {}  type {}  writers {}  readers {}",
            t["topic"].as_str().unwrap_or(""),
            types.join(", "),
            t["writers"],
            t["readers"]
        );
        for e in t["endpoints"].as_array().unwrap_or(&empty) {
            let _ = writeln!(
                out,
                "    {} {}  {}{}",
                e["kind"].as_str().unwrap_or(""),
                e["guid"].as_str().unwrap_or(""),
                qos_line(&e["qos"]),
                if e["describes_type"].as_bool() == Some(true) {
                    ""
                } else {
                    "  (no type information)"
                }
            );
        }
    }
    Ok(())
}

/// `ferrodds typeof TOPIC`: the type's IDL.
pub(crate) fn type_of(args: &TypeofArgs) -> Result<(), String> {
    let timeout = seconds(args.timeout, "--timeout")?;
    let p = args.join.participant()?;
    let topic = p
        .find_topic(&args.topic, timeout)
        .map_err(|e| format!("topic {}: {e}", args.topic))?;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "// topic {}, type {}", topic.name(), topic.type_name());
    let _ = write!(out, "{}", to_idl(topic.dynamic_type()));
    Ok(())
}

/// `ferrodds echo TOPIC`: the samples as JSON lines, until `--count` or `--duration`.
pub(crate) fn echo(args: &EchoArgs) -> Result<(), String> {
    let timeout = seconds(args.timeout, "--timeout")?;
    let duration = seconds(args.duration, "--duration")?;
    let started = Instant::now();
    let p = args.join.participant()?;
    let topic = args.type_source.topic(&p, &args.topic, timeout)?;
    // The writers found so far decide what a default reader asks for: a reader asking for
    // more than a writer offers would not match it.
    let writers: Vec<DiscoveredEndpoint> = p
        .discovered_endpoints()
        .into_iter()
        .filter(|e| e.kind == EndpointKind::Writer && e.data.topic_name == args.topic)
        .collect();
    let all =
        |f: &dyn Fn(&DiscoveredEndpoint) -> bool| !writers.is_empty() && writers.iter().all(f);
    let reliable = args.reliable
        || (!args.best_effort
            && all(&|w| w.data.qos.reliability.kind == ReliabilityKind::Reliable));
    let transient_local = args.transient_local
        || (!args.volatile && all(&|w| w.data.qos.durability != Durability::Volatile));
    let mut qos = Qos::reader().keep_all();
    qos = if reliable {
        qos.reliable()
    } else {
        qos.best_effort()
    };
    if transient_local {
        qos = qos.transient_local();
    }
    let partitions = if args.partition.is_empty() {
        partitions_of(&writers, EndpointKind::Writer, &args.topic)
    } else {
        args.partition.clone()
    };
    let partition_refs: Vec<&str> = partitions.iter().map(String::as_str).collect();
    let reader = p
        .create_subscriber(&partition_refs)
        .create_dynamic_reader(&topic, qos)
        .map_err(|e| format!("topic {}: {e}", args.topic))?;
    let ty = topic.dynamic_type().clone();
    if std::io::stderr().is_terminal() {
        eprintln!(
            "reading {} (type {}, {}, {})",
            args.topic,
            topic.type_name(),
            if reliable { "reliable" } else { "best-effort" },
            if transient_local {
                "transient-local"
            } else {
                "volatile"
            }
        );
    }
    let mut printed = 0u64;
    let mut out = std::io::stdout().lock();
    let end = (!duration.is_zero()).then(|| started + duration);
    loop {
        let left = end.map_or(Duration::from_millis(500), |e| {
            e.saturating_duration_since(Instant::now())
                .min(Duration::from_millis(500))
        });
        if end.is_some_and(|e| Instant::now() >= e) {
            break;
        }
        if !reader.wait_for_data(left) {
            continue;
        }
        for s in reader.take().map_err(|e| e.to_string())? {
            let Some(data) = &s.data else {
                continue;
            };
            if writeln!(out, "{}", data.to_json(&ty)).is_err() {
                // The reading end of a pipe closed (`| head`): done.
                return Ok(());
            }
            printed += 1;
            if args.count > 0 && printed >= args.count {
                let _ = out.flush();
                return Ok(());
            }
        }
        let _ = out.flush();
    }
    Ok(())
}

/// The partitions the endpoints of `kind` on `topic` use, each once (the default
/// partition, `""`, included where an endpoint uses it).
fn partitions_of(endpoints: &[DiscoveredEndpoint], kind: EndpointKind, topic: &str) -> Vec<String> {
    let mut names: Vec<String> = endpoints
        .iter()
        .filter(|e| e.kind == kind && e.data.topic_name == topic)
        .flat_map(|e| {
            let names = &e.data.qos.partition.names;
            if names.is_empty() {
                vec![String::new()]
            } else {
                names.clone()
            }
        })
        .collect();
    names.sort();
    names.dedup();
    // Only the default partition: the default publisher or subscriber.
    if names == [String::new()] {
        names.clear();
    }
    names
}

/// `ferrodds pub TOPIC [JSON]...`: writes (or disposes) each sample, then waits for the
/// readers to acknowledge them.
pub(crate) fn publish(args: &PubArgs) -> Result<(), String> {
    let timeout = seconds(args.timeout, "--timeout")?;
    let wait = seconds(args.wait, "--wait")?;
    let interval = seconds(args.interval, "--interval")?;
    let p = args.join.participant()?;
    let topic = args.type_source.topic(&p, &args.topic, timeout)?;
    let ty = topic.dynamic_type().clone();
    // The readers decide the writer's partitions and representation: give discovery up to
    // `--wait` to find one (a type from an IDL file did not wait for any endpoint).
    let started = Instant::now();
    while started.elapsed() < wait
        && !p
            .discovered_endpoints()
            .iter()
            .any(|e| e.kind == EndpointKind::Reader && e.data.topic_name == args.topic)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    let partitions = if args.partition.is_empty() {
        partitions_of(&p.discovered_endpoints(), EndpointKind::Reader, &args.topic)
    } else {
        args.partition.clone()
    };
    let partition_refs: Vec<&str> = partitions.iter().map(String::as_str).collect();
    // What `pub` wrote stays: exiting unregisters its instances (DDS deletes a writer so)
    // but does not dispose them.
    let mut qos = Qos::writer()
        .keep_all()
        .autodispose_unregistered_instances(false);
    let xcdr1_only = p.discovered_endpoints().iter().any(|e| {
        e.kind == EndpointKind::Reader
            && e.data.topic_name == args.topic
            && !e
                .data
                .qos
                .data_representation
                .accepts(DataRepresentationId::XCDR2)
    });
    match args.xcdr {
        Some(1) => qos = qos.data_representation([DataRepresentationId::XCDR]),
        Some(_) => qos = qos.data_representation([DataRepresentationId::XCDR2]),
        None if xcdr1_only => qos = qos.data_representation([DataRepresentationId::XCDR]),
        None => {}
    }
    qos = if args.best_effort {
        qos.best_effort()
    } else {
        qos.reliable()
    };
    if !args.volatile {
        qos = qos.transient_local();
    }
    let writer = p
        .create_publisher(&partition_refs)
        .create_dynamic_writer(&topic, qos)
        .map_err(|e| format!("topic {}: {e}", args.topic))?;
    if writer.wait_for_matched(1, wait).is_err() {
        if std::io::stderr().is_terminal() {
            eprintln!("no reader of {} yet: writing anyway", args.topic);
        }
    } else {
        // A reader that matched us but has not heard from us may drop what comes first.
        let _ = writer.wait_for_readers_heard(wait.saturating_sub(started.elapsed()));
    }
    let write_one = |text: &str, place: &str| -> Result<(), String> {
        let value = DynamicValue::from_json_text(&ty, text).map_err(|e| match e {
            JsonTextError::Syntax(e) => format!("{place}: not JSON: {e}"),
            JsonTextError::Value(e) => format!("{place}: not a {}: {e}", ty.name()),
        })?;
        if args.dispose {
            writer.dispose(&value)
        } else {
            writer.write(&value)
        }
        .map_err(|e| format!("{place}: {e}"))?;
        if !interval.is_zero() {
            std::thread::sleep(interval);
        }
        Ok(())
    };
    if args.samples.is_empty() {
        for (n, line) in std::io::stdin().lock().lines().enumerate() {
            let line = line.map_err(|e| format!("standard input: {e}"))?;
            if line.trim().is_empty() {
                continue;
            }
            write_one(&line, &format!("standard input, line {}", n + 1))?;
        }
    } else {
        for (n, text) in args.samples.iter().enumerate() {
            write_one(text, &format!("sample {}", n + 1))?;
        }
    }
    if writer.wait_for_acknowledgments(wait).is_err() {
        eprintln!(
            "not every reader of {} acknowledged the samples within {:.1} s",
            args.topic,
            wait.as_secs_f64()
        );
    }
    // Acknowledged is not yet taken: a reader that keeps one sample per instance (KEEP_LAST
    // 1, Fast DDS's shape application) would have the last one replaced by the unregister
    // the writer's deletion sends, were it to come first.
    std::thread::sleep(UNREGISTER_GRACE);
    Ok(())
}

/// How long `pub` waits after its samples were acknowledged before its writer goes.
const UNREGISTER_GRACE: Duration = Duration::from_millis(500);
