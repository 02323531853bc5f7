//! The shape application's command line: the options of the interoperability suite's
//! `shape_main` (omg-dds/dds-rtps, `srcCxx/shape_main.cxx`), read the way its `getopt_long`
//! reads them (`-t Square`, `-tSquare`, `--write-period 50`, `--write-period=50`, the last of
//! `-b`/`-r` wins), then checked as it checks them.

use std::time::Duration;

use clap::{ArgAction, Parser};

/// The options as given. Numbers are read as the suite's `sscanf("%d")` would accept them
/// only in their plain form; anything else is a usage error.
#[derive(Parser, Debug)]
#[command(
    name = "shape_main",
    about = "FerroDDS's shape application for the OMG DDS interoperability suite",
    disable_help_flag = true,
    disable_version_flag = true,
    args_override_self = true
)]
pub(crate) struct ShapeArgs {
    /// Print this help.
    #[arg(short = 'h', long = "help", action = ArgAction::SetTrue)]
    help: bool,
    /// Verbosity: e (errors) or d (debug).
    #[arg(short = 'v', value_name = "e|d")]
    verbosity: Option<String>,
    /// Publish samples.
    #[arg(short = 'P')]
    publish: bool,
    /// Subscribe to samples.
    #[arg(short = 'S')]
    subscribe: bool,
    /// Domain id (default 0).
    #[arg(short = 'd', allow_negative_numbers = true)]
    domain: Option<i64>,
    /// BEST_EFFORT reliability.
    #[arg(short = 'b', overrides_with = "reliable")]
    best_effort: bool,
    /// RELIABLE reliability (the default).
    #[arg(short = 'r', overrides_with = "best_effort")]
    reliable: bool,
    /// Keep history depth (0: KEEP_ALL).
    #[arg(short = 'k', allow_negative_numbers = true, value_name = "depth")]
    history_depth: Option<i32>,
    /// Deadline period in ms (0: off).
    #[arg(short = 'f', allow_negative_numbers = true, value_name = "ms")]
    deadline: Option<i64>,
    /// Ownership strength (-1: SHARED).
    #[arg(short = 's', allow_negative_numbers = true, value_name = "strength")]
    ownership_strength: Option<i32>,
    /// Topic name.
    #[arg(short = 't', value_name = "topic_name")]
    topic: Option<String>,
    /// Color to publish (on a subscriber: only this color is received).
    #[arg(short = 'c', value_name = "color")]
    color: Option<String>,
    /// Partition name (wildcards allowed).
    #[arg(short = 'p', value_name = "partition")]
    partition: Option<String>,
    /// Durability: v (VOLATILE), l (TRANSIENT_LOCAL), t (TRANSIENT), p (PERSISTENT).
    #[arg(short = 'D', value_name = "v|l|t|p")]
    durability: Option<String>,
    /// Data representation: 1 (XCDR, the default) or 2 (XCDR2).
    #[arg(short = 'x', value_name = "1|2")]
    representation: Option<String>,
    /// Print the samples published.
    #[arg(short = 'w')]
    print_writer_samples: bool,
    /// Shapesize (0: grows by one with every sample).
    #[arg(short = 'z', allow_negative_numbers = true, value_name = "int")]
    shapesize: Option<i32>,
    /// Use read() instead of take().
    #[arg(short = 'R')]
    use_read: bool,
    /// Period between writes in ms (default 33).
    #[arg(long, allow_negative_numbers = true, value_name = "ms")]
    write_period: Option<i64>,
    /// Period between reads in ms (default 100).
    #[arg(long, allow_negative_numbers = true, value_name = "ms")]
    read_period: Option<i64>,
    /// TIME_BASED_FILTER minimum separation in ms (0: off).
    #[arg(long, allow_negative_numbers = true, value_name = "ms")]
    time_filter: Option<i64>,
    /// LIFESPAN of the samples written, in ms.
    #[arg(long, allow_negative_numbers = true, value_name = "ms")]
    lifespan: Option<i64>,
    /// Iterations of the main loop before exiting (default: until interrupted).
    #[arg(long, allow_negative_numbers = true, value_name = "int")]
    num_iterations: Option<i64>,
    /// Instances written: the color, then the color followed by 1, 2, ...
    #[arg(long, allow_negative_numbers = true, value_name = "int")]
    num_instances: Option<i64>,
    /// Topics (and one writer or reader each): the name, then the name followed by 1, 2, ...
    #[arg(long, allow_negative_numbers = true, value_name = "int")]
    num_topics: Option<i64>,
    /// What the writer does to its instances before it is deleted: u (unregister) or d
    /// (dispose).
    #[arg(long, value_name = "u|d")]
    final_instance_state: Option<String>,
    /// PRESENTATION access scope: i (INSTANCE), t (TOPIC) or g (GROUP).
    #[arg(long, value_name = "i|t|g")]
    access_scope: Option<String>,
    /// PRESENTATION coherent_access.
    #[arg(long)]
    coherent: bool,
    /// PRESENTATION ordered_access.
    #[arg(long)]
    ordered: bool,
    /// Samples per writer and instance grouped in a coherent set.
    #[arg(long, allow_negative_numbers = true, value_name = "int")]
    coherent_sample_count: Option<i64>,
    /// Bytes appended to every sample written (large data).
    #[arg(long, allow_negative_numbers = true, value_name = "bytes")]
    additional_payload_size: Option<i64>,
    /// Use take()/read() instead of take_next_instance()/read_next_instance().
    #[arg(long)]
    take_read: bool,
    /// Period of the participant announcements in ms (0: the default).
    #[arg(long, allow_negative_numbers = true, value_name = "ms")]
    periodic_announcement: Option<i64>,
    /// DATA_FRAG fragment size in bytes (0: the default).
    #[arg(long, allow_negative_numbers = true, value_name = "bytes")]
    datafrag_size: Option<i64>,
    /// Content filter expression (a subscriber cannot have both this and -c).
    #[arg(long, value_name = "expression")]
    cft: Option<String>,
    /// With -z 0, the shapesize runs from 1 to this value and starts again.
    #[arg(long, allow_negative_numbers = true, value_name = "int")]
    size_modulo: Option<i64>,
    /// The network interface (FerroDDS's own option; by default `FERRODDS_CONFIG` or the
    /// first multicast-capable interface decides).
    #[arg(long, value_name = "name|address")]
    interface: Option<String>,
    /// Announce endpoints by type name alone, without XTypes type information (FerroDDS's
    /// own option; needed with Cyclone DDS 0.10 applications, see docs/interop.md).
    #[arg(long)]
    no_type_information: bool,
    /// The compatibility mode for Fast DDS 2.x (FerroDDS's own option): its endpoints,
    /// which announce no data representation, match ours at `-x 2`, and its readers get
    /// XCDR1 (see docs/interop.md).
    #[arg(long)]
    fast_dds_xcdr1: bool,
}

/// Publisher or subscriber.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// `-P`.
    Publish,
    /// `-S`.
    Subscribe,
}

/// `-D`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DurabilityKind {
    Volatile,
    TransientLocal,
    Transient,
    Persistent,
}

impl DurabilityKind {
    pub(crate) const fn name(self) -> &'static str {
        match self {
            DurabilityKind::Volatile => "VOLATILE",
            DurabilityKind::TransientLocal => "TRANSIENT_LOCAL",
            DurabilityKind::Transient => "TRANSIENT",
            DurabilityKind::Persistent => "PERSISTENT",
        }
    }
}

/// `-x`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Representation {
    Xcdr1,
    Xcdr2,
}

impl Representation {
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Representation::Xcdr1 => "XCDR",
            Representation::Xcdr2 => "XCDR2",
        }
    }
}

/// `--final-instance-state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FinalState {
    Unregister,
    Dispose,
}

/// `--access-scope`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AccessScope {
    Instance,
    Topic,
    Group,
}

impl AccessScope {
    pub(crate) const fn name(self) -> &'static str {
        match self {
            AccessScope::Instance => "INSTANCE_PRESENTATION_QOS",
            AccessScope::Topic => "TOPIC_PRESENTATION_QOS",
            AccessScope::Group => "GROUP_PRESENTATION_QOS",
        }
    }
}

/// The options, checked, with the suite's defaults filled in.
#[derive(Debug, Clone)]
pub(crate) struct ShapeOptions {
    pub(crate) role: Role,
    pub(crate) debug: bool,
    pub(crate) domain: u32,
    pub(crate) reliable: bool,
    pub(crate) durability: DurabilityKind,
    pub(crate) representation: Representation,
    /// `None`: the default (KEEP_LAST 1); `Some(0)`: KEEP_ALL; `Some(n)`: KEEP_LAST n.
    pub(crate) history_depth: Option<u32>,
    /// -1: SHARED; otherwise EXCLUSIVE with this strength.
    pub(crate) ownership_strength: i32,
    pub(crate) topic: String,
    pub(crate) color: Option<String>,
    pub(crate) partition: Option<String>,
    pub(crate) time_filter: Duration,
    pub(crate) deadline: Duration,
    pub(crate) lifespan: Duration,
    pub(crate) shapesize: i32,
    pub(crate) print_writer_samples: bool,
    pub(crate) use_read: bool,
    pub(crate) write_period: Duration,
    pub(crate) read_period: Duration,
    /// 0: until interrupted.
    pub(crate) num_iterations: u32,
    pub(crate) num_instances: u32,
    pub(crate) num_topics: u32,
    pub(crate) final_state: Option<FinalState>,
    pub(crate) access_scope: Option<AccessScope>,
    pub(crate) coherent: bool,
    pub(crate) ordered: bool,
    pub(crate) coherent_sample_count: u32,
    pub(crate) additional_payload_size: u32,
    pub(crate) take_read_next_instance: bool,
    pub(crate) periodic_announcement: Duration,
    pub(crate) datafrag_size: u32,
    pub(crate) cft: Option<String>,
    pub(crate) size_modulo: u32,
    pub(crate) interface: Option<String>,
    pub(crate) type_information: bool,
    pub(crate) fast_dds_xcdr1: bool,
}

/// What parsing produced besides options.
#[derive(Debug)]
pub(crate) enum Parsed {
    /// Run with these options; print the warnings first.
    Run(Box<ShapeOptions>, Vec<String>),
    /// `-h`: print the usage and exit successfully.
    Help(String),
    /// A usage error: print these lines and the usage, exit with status 1.
    Error(Vec<String>, String),
}

fn ms(value: i64) -> Duration {
    Duration::from_millis(value.max(0).unsigned_abs())
}

/// The first character of an option's value, as the suite's `switch (optarg[0])` reads it.
fn first_char(s: &str) -> Option<char> {
    s.chars().next()
}

/// Parses and checks `argv` (program name first).
pub(crate) fn parse<I, S>(argv: I) -> Parsed
where
    I: IntoIterator<Item = S>,
    S: Into<std::ffi::OsString> + Clone,
{
    use clap::CommandFactory;
    let usage = ShapeArgs::command().render_help().to_string();
    let args = match ShapeArgs::try_parse_from(argv) {
        Ok(a) => a,
        Err(e) => {
            let text = e.to_string();
            let first = text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("invalid arguments")
                .to_string();
            return Parsed::Error(vec![first], usage);
        }
    };
    if args.help {
        return Parsed::Help(usage);
    }
    match check(args) {
        Ok((options, warnings)) => Parsed::Run(Box::new(options), warnings),
        Err(errors) => Parsed::Error(errors, usage),
    }
}

/// The suite's checks: each bad value is one error line; warnings for options that do not
/// apply to the role.
fn check(a: ShapeArgs) -> Result<(ShapeOptions, Vec<String>), Vec<String>> {
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let mut non_negative = |name: &str, v: Option<i64>, default: i64| -> i64 {
        match v {
            Some(v) if v < 0 => {
                errors.push(format!("incorrect value for {name}: {v} (must be >= 0)"));
                default
            }
            Some(v) => v,
            None => default,
        }
    };
    let domain = non_negative("domain id [-d]", a.domain, 0);
    let deadline = non_negative("deadline [-f]", a.deadline, 0);
    let write_period = non_negative("--write-period", a.write_period, 33);
    let read_period = non_negative("--read-period", a.read_period, 100);
    let time_filter = non_negative("--time-filter", a.time_filter, 0);
    let lifespan = non_negative("--lifespan", a.lifespan, 0);
    let periodic_announcement = non_negative("--periodic-announcement", a.periodic_announcement, 0);
    let shapesize = non_negative("shapesize [-z]", a.shapesize.map(i64::from), 20);
    let datafrag_size = non_negative("--datafrag-size", a.datafrag_size, 0);
    let history_depth = non_negative("history depth [-k]", a.history_depth.map(i64::from), -1);
    let mut at_least = |name: &str, v: Option<i64>, min: i64, default: i64| -> i64 {
        match v {
            Some(v) if v < min => {
                errors.push(format!(
                    "incorrect value for {name}: {v} (must be >= {min})"
                ));
                default
            }
            Some(v) => v,
            None => default,
        }
    };
    let num_iterations = at_least("--num-iterations", a.num_iterations, 1, 0);
    let num_instances = at_least("--num-instances", a.num_instances, 1, 1);
    let num_topics = at_least("--num-topics", a.num_topics, 1, 1);
    let additional_payload_size =
        at_least("--additional-payload-size", a.additional_payload_size, 1, 0);
    let coherent_sample_count = at_least("--coherent-sample-count", a.coherent_sample_count, 2, 0);
    let size_modulo = at_least("--size-modulo", a.size_modulo, 1, 0);
    if a.ownership_strength.is_some_and(|s| s < -1) {
        errors.push(format!(
            "incorrect value for ownership strength [-s]: {} (must be >= -1)",
            a.ownership_strength.unwrap_or_default()
        ));
    }
    if datafrag_size > 65535 {
        errors.push(format!(
            "incorrect value for --datafrag-size: {datafrag_size} (a fragment has at most 65535 bytes)"
        ));
    }
    let debug = match a.verbosity.as_deref().and_then(first_char) {
        None | Some('e') => false,
        Some('d') => true,
        Some(c) => {
            errors.push(format!("unrecognized value for verbosity [-v]: {c}"));
            false
        }
    };
    let durability = match a.durability.as_deref().and_then(first_char) {
        None | Some('v') => DurabilityKind::Volatile,
        Some('l') => DurabilityKind::TransientLocal,
        Some('t') => DurabilityKind::Transient,
        Some('p') => DurabilityKind::Persistent,
        Some(c) => {
            errors.push(format!("unrecognized value for durability [-D]: {c}"));
            DurabilityKind::Volatile
        }
    };
    let representation = match a.representation.as_deref().and_then(first_char) {
        None | Some('1') => Representation::Xcdr1,
        Some('2') => Representation::Xcdr2,
        Some(c) => {
            errors.push(format!(
                "unrecognized value for data representation [-x]: {c}"
            ));
            Representation::Xcdr1
        }
    };
    let final_state = match a.final_instance_state.as_deref().and_then(first_char) {
        None => None,
        Some('u') => Some(FinalState::Unregister),
        Some('d') => Some(FinalState::Dispose),
        Some(c) => {
            errors.push(format!(
                "unrecognized value for --final-instance-state: {c}"
            ));
            None
        }
    };
    let access_scope = match a.access_scope.as_deref().and_then(first_char) {
        None => None,
        Some('i') => Some(AccessScope::Instance),
        Some('t') => Some(AccessScope::Topic),
        Some('g') => Some(AccessScope::Group),
        Some(c) => {
            errors.push(format!("unrecognized value for --access-scope: {c}"));
            None
        }
    };
    let Some(topic) = a.topic.clone() else {
        errors.push("a topic name is needed [-t]".into());
        return Err(errors);
    };
    let role = match (a.publish, a.subscribe) {
        (true, false) => Role::Publish,
        (false, true) => Role::Subscribe,
        (false, false) => {
            errors.push("publish [-P] or subscribe [-S] is needed".into());
            return Err(errors);
        }
        (true, true) => {
            errors.push("publish [-P] and subscribe [-S] cannot both be given".into());
            return Err(errors);
        }
    };
    let publish = role == Role::Publish;
    let mut color = a.color.clone();
    if publish && color.is_none() {
        color = Some("BLUE".into());
        warnings.push("warning: no color given [-c]; publishing BLUE".into());
    }
    let ignored = |cond: bool, what: &str, warnings: &mut Vec<String>| {
        if cond {
            warnings.push(format!("warning: {what}"));
        }
    };
    ignored(
        publish && time_filter > 0,
        "--time-filter applies to subscribers only; ignored",
        &mut warnings,
    );
    ignored(
        publish && a.use_read,
        "-R applies to subscribers only; ignored",
        &mut warnings,
    );
    ignored(
        publish && a.take_read,
        "--take-read applies to subscribers only; ignored",
        &mut warnings,
    );
    ignored(
        publish && a.cft.is_some(),
        "--cft applies to subscribers only; ignored",
        &mut warnings,
    );
    ignored(
        !publish && a.shapesize.is_some_and(|z| z != 20),
        "-z applies to publishers only; ignored",
        &mut warnings,
    );
    ignored(
        !publish && lifespan > 0,
        "--lifespan applies to publishers only; ignored",
        &mut warnings,
    );
    ignored(
        !publish && num_instances > 1,
        "--num-instances applies to publishers only; ignored",
        &mut warnings,
    );
    ignored(
        !publish && final_state.is_some(),
        "--final-instance-state applies to publishers only; ignored",
        &mut warnings,
    );
    ignored(
        !publish && coherent_sample_count > 0,
        "--coherent-sample-count applies to publishers only; ignored",
        &mut warnings,
    );
    ignored(
        !a.coherent && !a.ordered && coherent_sample_count > 0,
        "--coherent-sample-count needs --coherent or --ordered; ignored",
        &mut warnings,
    );
    ignored(
        !publish && additional_payload_size > 0,
        "--additional-payload-size applies to publishers only; ignored",
        &mut warnings,
    );
    ignored(
        !a.coherent && !a.ordered && access_scope.is_some(),
        "--access-scope needs --coherent or --ordered; ignored",
        &mut warnings,
    );
    ignored(
        size_modulo > 0 && shapesize != 0,
        "--size-modulo needs -z 0; ignored",
        &mut warnings,
    );
    if !publish && a.color.is_some() && a.cft.is_some() {
        errors.push("a subscriber takes -c or --cft, not both".into());
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let to_u32 = |v: i64| u32::try_from(v).unwrap_or(u32::MAX);
    Ok((
        ShapeOptions {
            role,
            debug,
            domain: to_u32(domain),
            reliable: !a.best_effort,
            durability,
            representation,
            history_depth: (history_depth >= 0).then(|| to_u32(history_depth)),
            ownership_strength: a.ownership_strength.unwrap_or(-1),
            topic,
            color,
            partition: a.partition.clone(),
            time_filter: ms(time_filter),
            deadline: ms(deadline),
            lifespan: ms(lifespan),
            shapesize: i32::try_from(shapesize).unwrap_or(i32::MAX),
            print_writer_samples: a.print_writer_samples,
            use_read: a.use_read,
            write_period: ms(write_period),
            read_period: ms(read_period),
            num_iterations: to_u32(num_iterations),
            num_instances: to_u32(num_instances),
            num_topics: to_u32(num_topics),
            final_state,
            access_scope,
            coherent: a.coherent,
            ordered: a.ordered,
            coherent_sample_count: to_u32(coherent_sample_count),
            additional_payload_size: to_u32(additional_payload_size),
            take_read_next_instance: !a.take_read,
            periodic_announcement: ms(periodic_announcement),
            datafrag_size: to_u32(datafrag_size),
            cft: a.cft.clone(),
            size_modulo: to_u32(size_modulo),
            interface: a.interface.clone(),
            type_information: !a.no_type_information,
            fast_dds_xcdr1: a.fast_dds_xcdr1,
        },
        warnings,
    ))
}

impl ShapeOptions {
    /// The names of the topics: the name, then the name followed by 1, 2, ...
    pub(crate) fn topic_names(&self) -> Vec<String> {
        (0..self.num_topics.max(1))
            .map(|i| {
                if i == 0 {
                    self.topic.clone()
                } else {
                    format!("{}{i}", self.topic)
                }
            })
            .collect()
    }

    /// The colors of the instances a publisher writes: the color, then the color followed
    /// by 1, 2, ...
    pub(crate) fn instance_colors(&self) -> Vec<String> {
        let color = self.color.clone().unwrap_or_else(|| "BLUE".into());
        (0..self.num_instances.max(1))
            .map(|j| {
                if j == 0 {
                    color.clone()
                } else {
                    format!("{color}{j}")
                }
            })
            .collect()
    }

    /// The options as the suite's debug output lists them.
    pub(crate) fn describe(&self) -> Vec<String> {
        let on_off = |b: bool| if b { "true" } else { "false" };
        let mut lines = vec![
            "Shape Options:".to_string(),
            format!(
                "    Verbosity = {}",
                if self.debug { "DEBUG" } else { "ERROR" }
            ),
            format!(
                "    This application is a {}",
                match self.role {
                    Role::Publish => "publisher",
                    Role::Subscribe => "subscriber",
                }
            ),
            format!("    DomainId = {}", self.domain),
            format!(
                "    ReliabilityKind = {}",
                if self.reliable {
                    "RELIABLE"
                } else {
                    "BEST_EFFORT"
                }
            ),
            format!("    DurabilityKind = {}", self.durability.name()),
            format!("    DataRepresentation = {}", self.representation.name()),
            format!(
                "    HistoryDepth = {}",
                self.history_depth.map_or(-1, i64::from)
            ),
            format!("    OwnershipStrength = {}", self.ownership_strength),
            format!(
                "    TimeBasedFilterInterval = {}ms",
                self.time_filter.as_millis()
            ),
            format!("    DeadlineInterval = {}ms", self.deadline.as_millis()),
            format!("    Shapesize = {}", self.shapesize),
            format!(
                "    Reading method = {}",
                match (self.use_read, self.take_read_next_instance) {
                    (true, true) => "read_next_instance",
                    (true, false) => "read",
                    (false, true) => "take_next_instance",
                    (false, false) => "take",
                }
            ),
            format!("    Write period = {}ms", self.write_period.as_millis()),
            format!("    Read period = {}ms", self.read_period.as_millis()),
            format!("    Lifespan = {}ms", self.lifespan.as_millis()),
            format!("    Number of iterations = {}", self.num_iterations),
            format!("    Number of instances = {}", self.num_instances),
            format!("    Number of entities = {}", self.num_topics),
            format!("    Coherent sets = {}", on_off(self.coherent)),
            format!("    Ordered access = {}", on_off(self.ordered)),
            format!(
                "    Access Scope = {}",
                self.access_scope.unwrap_or(AccessScope::Instance).name()
            ),
            format!("    Coherent Sample Count = {}", self.coherent_sample_count),
            format!(
                "    Additional Payload Size = {}",
                self.additional_payload_size
            ),
            format!(
                "    Final Instance State = {}",
                match self.final_state {
                    Some(FinalState::Unregister) => "Unregister",
                    Some(FinalState::Dispose) => "Dispose",
                    None => "not specified",
                }
            ),
            format!(
                "    Periodic Announcement Period = {}ms",
                self.periodic_announcement.as_millis()
            ),
            format!("    Data Fragmentation Size = {} bytes", self.datafrag_size),
            format!("    Topic = {}", self.topic),
        ];
        if let Some(c) = &self.color {
            lines.push(format!("    Color = {c}"));
        }
        if let Some(p) = &self.partition {
            lines.push(format!("    Partition = {p}"));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &str) -> ShapeOptions {
        let argv = std::iter::once("shape_main").chain(args.split_whitespace());
        match parse(argv) {
            Parsed::Run(o, _) => *o,
            other => panic!("{args}: {other:?}"),
        }
    }

    fn error(args: &str) -> Vec<String> {
        let argv = std::iter::once("shape_main").chain(args.split_whitespace());
        match parse(argv) {
            Parsed::Error(e, _) => e,
            other => panic!("{args}: expected an error, got {other:?}"),
        }
    }

    #[test]
    fn the_suites_defaults() {
        let o = run("-P -t Square");
        assert_eq!(o.role, Role::Publish);
        assert_eq!(o.domain, 0);
        assert!(o.reliable);
        assert_eq!(o.durability, DurabilityKind::Volatile);
        assert_eq!(o.representation, Representation::Xcdr1);
        assert_eq!(o.history_depth, None);
        assert_eq!(o.ownership_strength, -1);
        assert_eq!(o.color.as_deref(), Some("BLUE"));
        assert_eq!(o.shapesize, 20);
        assert_eq!(o.write_period, Duration::from_millis(33));
        assert_eq!(o.read_period, Duration::from_millis(100));
        assert_eq!(o.num_iterations, 0);
        assert!(o.take_read_next_instance);
    }

    #[test]
    fn getopt_forms() {
        let o = run("-S -tCircle -d 3 -b -k 0 -s -1 -x 2 -D l --read-period=200 --take-read");
        assert_eq!(o.topic, "Circle");
        assert_eq!(o.domain, 3);
        assert!(!o.reliable);
        assert_eq!(o.history_depth, Some(0));
        assert_eq!(o.representation, Representation::Xcdr2);
        assert_eq!(o.durability, DurabilityKind::TransientLocal);
        assert_eq!(o.read_period, Duration::from_millis(200));
        assert!(!o.take_read_next_instance);
        // The last of -b and -r wins.
        assert!(run("-S -t T -b -r").reliable);
        assert!(!run("-S -t T -r -b").reliable);
        assert_eq!(run("-P -t T -s 3").ownership_strength, 3);
        assert_eq!(
            run("-P -t T --num-instances 4 -c RED").instance_colors(),
            ["RED", "RED1", "RED2", "RED3"]
        );
        assert_eq!(
            run("-S -t Square --num-topics 3").topic_names(),
            ["Square", "Square1", "Square2"]
        );
    }

    #[test]
    fn bad_usage() {
        assert!(!error("-P").is_empty());
        assert!(!error("-t Square").is_empty());
        assert!(!error("-P -S -t Square").is_empty());
        assert!(!error("-P -t Square -x 3").is_empty());
        assert!(!error("-P -t Square -s -2").is_empty());
        assert!(!error("-S -t Square -c RED --cft x").is_empty());
        assert!(!error("-P -t Square --bogus").is_empty());
    }
}
