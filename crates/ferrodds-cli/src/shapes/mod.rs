//! `ferrodds shapes` (also built as `shape_main`): the shape application of the OMG DDS
//! interoperability suite (github.com/omg-dds/dds-rtps). It takes the suite's options and
//! prints the lines the suite's scripts match — `Create topic:`, `Create writer for
//! topic:`, `Create reader for topic:`, the listener lines (`on_publication_matched()`,
//! `on_offered_incompatible_qos()`, `on_requested_deadline_missed()`, ...), one
//! `"%-10s %-10s %03d %03d [%d]"` line per sample, and the instance-state lines — so that the
//! suite can run FerroDDS against other vendors' applications.
//!
//! What FerroDDS cannot do yet (TRANSIENT and PERSISTENT durability, a chosen fragment
//! size) is refused with a line containing "not supported"
//! and exit status 2, which the suite records as an unsupported feature. `docs/interop.md`
//! lists the suite's test families and what passes with which peer.
//!
//! Exit status, as the suite's application: 0 after `Done.`, 1 for bad options, 2 when the
//! entities could not be created (or a feature is not supported).
//!
//! Statuses are polled, not delivered by listeners (see `status.rs`).

mod filter;
mod options;
mod publisher;
mod qos;
pub(crate) mod shape;
mod status;
mod subscriber;

use clap::Args;
use ferrodds::{DomainParticipant, Topic};

use options::{Parsed, Role, ShapeOptions};
use shape::{ShapeType, TYPE_NAME};
use status::Stop;

/// The arguments of `ferrodds shapes`, parsed by [`run`] (the suite's option syntax).
#[derive(Args, Debug)]
#[command(disable_help_flag = true)]
pub(crate) struct ShapesCommand {
    /// The suite's options (see `ferrodds shapes -h`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub(crate) args: Vec<String>,
}

/// Why the application stops early; each has the suite's exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Failure {
    /// The entities could not be created, or a feature is not supported (2).
    Init,
}

/// The suite's logger: errors always, debug lines with `-v d`; both on stdout, where the
/// suite reads them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Log {
    debug: bool,
}

impl Log {
    pub(crate) fn error(&self, message: &str) {
        println!("{message}");
    }

    pub(crate) fn debug(&self, message: &str) {
        if self.debug {
            println!("{message}");
        }
    }

    /// Prints a "not supported" line (the suite looks for those words).
    pub(crate) fn not_supported(&self, message: &str) -> Failure {
        debug_assert!(message.contains("not supported"));
        self.error(message);
        Failure::Init
    }

    /// Prints why an entity could not be created.
    pub(crate) fn init_error(&self, message: &str) -> Failure {
        self.error(message);
        Failure::Init
    }
}

/// Runs `ferrodds shapes` (or `shape_main`) with `command`'s arguments; exits with the
/// suite's status when it is not 0.
pub(crate) fn run(command: &ShapesCommand) -> Result<(), String> {
    match main("shape_main", &command.args) {
        0 => Ok(()),
        code => std::process::exit(code),
    }
}

/// The application: the exit status.
fn main(program: &str, args: &[String]) -> i32 {
    let argv = std::iter::once(program.to_string()).chain(args.iter().cloned());
    let (options, warnings) = match options::parse(argv) {
        Parsed::Help(usage) => {
            print!("{usage}");
            return 0;
        }
        Parsed::Error(errors, usage) => {
            for e in errors {
                println!("{e}");
            }
            print!("{usage}");
            return 1;
        }
        Parsed::Run(options, warnings) => (options, warnings),
    };
    let log = Log {
        debug: options.debug,
    };
    for w in warnings {
        log.error(&w);
    }
    for line in options.describe() {
        log.debug(&line);
    }
    match run_options(&options, &log) {
        Ok(()) => {
            println!("Done.");
            0
        }
        Err(Failure::Init) => 2,
    }
}

fn participant(o: &ShapeOptions, log: &Log) -> Result<DomainParticipant, Failure> {
    let fail = |e: ferrodds::Error| log.init_error(&format!("failed to create participant: {e}"));
    let mut builder = DomainParticipant::builder()
        .map_err(fail)?
        .domain_id(o.domain)
        .type_information(o.type_information)
        .fast_dds_xcdr1(o.fast_dds_xcdr1);
    if let Some(interface) = &o.interface {
        builder = builder.interface(interface).map_err(fail)?;
    }
    if !o.periodic_announcement.is_zero() {
        builder = builder.announce_period(o.periodic_announcement);
    }
    builder.build().map_err(fail)
}

fn run_options(o: &ShapeOptions, log: &Log) -> Result<(), Failure> {
    let stop = Stop::default();
    stop.on_signals();
    let participant = participant(o, log)?;
    log.debug("Participant created");
    let mut topics: Vec<Topic<ShapeType>> = Vec::new();
    for name in o.topic_names() {
        println!("Create topic: {name}");
        let topic = participant
            .create_topic_with_type_name::<ShapeType>(&name, TYPE_NAME)
            .map_err(|e| log.init_error(&format!("failed to create topic <{name}>: {e}")))?;
        topics.push(topic);
    }
    match o.role {
        Role::Publish => {
            let (publisher, writers) = publisher::create(&participant, &topics, o, log)?;
            publisher::run(&publisher, &writers, &topics, o, log, &stop)
        }
        Role::Subscribe => {
            let (subscriber, readers) = subscriber::create(&participant, &topics, o, log)?;
            subscriber::run(&subscriber, &readers, &topics, o, log, &stop)
        }
    }
}
