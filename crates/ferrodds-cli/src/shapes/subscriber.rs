//! The subscribing side: one reader per topic, each read (or taken) every read period and
//! every sample printed; instances that are no longer alive print their state.

use ferrodds::{DataReader, DomainParticipant, InstanceState, Sample, Subscriber, Topic};

use super::filter::Filter;
use super::options::ShapeOptions;
use super::publisher::sleep_watching;
use super::shape::{instance_state_line, sample_line, ShapeType};
use super::status::{Stop, Watch};
use super::{qos, Failure, Log};

/// The readers, created as the suite's application creates them (printing each). With a
/// color (`-c`) or an expression (`--cft`), each reader gets a content filter and the name
/// `<topic>_filtered`.
pub(super) fn create(
    participant: &DomainParticipant,
    topics: &[Topic<ShapeType>],
    o: &ShapeOptions,
    log: &Log,
) -> Result<(Subscriber, Vec<DataReader<ShapeType>>), Failure> {
    let partition: Vec<&str> = o.partition.as_deref().into_iter().collect();
    let mut subscriber = participant.create_subscriber(&partition);
    if let Some(p) = qos::presentation(o, log) {
        subscriber = subscriber.with_presentation(p);
    }
    let reader_qos = qos::reader(o);
    log.debug(&format!("Data Reader QoS: {:?}", reader_qos.policies()));
    let filter = match (&o.cft, &o.color) {
        (Some(expression), _) => match Filter::parse(expression) {
            Ok(f) => {
                log.debug(&format!("    ContentFilterTopic = \"{expression}\""));
                Some(f)
            }
            Err(e) => {
                log.debug(&format!("--cft {expression:?}: {e}"));
                println!("failed to create content filtered topic");
                return Err(Failure::Init);
            }
        },
        (None, Some(color)) => {
            log.debug(&format!("    ContentFilterTopic = \"color = '{color}'\""));
            Some(Filter::color(color))
        }
        (None, None) => None,
    };
    let mut readers = Vec::new();
    for topic in topics {
        let reader = match &filter {
            Some(f) => {
                println!("Create reader for topic: {}_filtered", topic.name());
                subscriber.create_reader_with_expression(
                    topic,
                    reader_qos.clone(),
                    f.expression(),
                    &f.parameters(),
                )
            }
            None => {
                println!("Create reader for topic: {}", topic.name());
                subscriber.create_reader(topic, reader_qos.clone())
            }
        }
        .map_err(|e| log.init_error(&format!("failed to create datareader: {e}")))?;
        readers.push(reader);
    }
    Ok((subscriber, readers))
}

/// Reads every read period until stopped or the iterations are done.
pub(super) fn run(
    subscriber: &Subscriber,
    readers: &[DataReader<ShapeType>],
    topics: &[Topic<ShapeType>],
    o: &ShapeOptions,
    log: &Log,
    stop: &Stop,
) -> Result<(), Failure> {
    let mut watches: Vec<Watch> = topics.iter().map(|t| Watch::new(t.name())).collect();
    let poll = |watches: &mut [Watch]| {
        for (r, watch) in readers.iter().zip(watches.iter_mut()) {
            watch.poll_reader(r);
        }
    };
    let mut iterations = 0u32;
    while !stop.stopped() {
        poll(&mut watches);
        // As the suite's application: one access per iteration, announced by the line
        // its checks count sets by.
        if o.coherent {
            println!("Reading coherent sets, iteration {iterations}");
        }
        if o.ordered {
            println!("Reading with ordered access, iteration {iterations}");
        }
        let access = o.coherent || o.ordered;
        if access {
            subscriber.begin_access();
        }
        for (reader, topic) in readers.iter().zip(topics) {
            let got = if o.use_read {
                reader.read()
            } else {
                reader.take()
            };
            let mut samples = match got {
                Ok(s) => s,
                Err(e) => {
                    log.error(&format!("reading from {}: {e}", topic.name()));
                    continue;
                }
            };
            if o.take_read_next_instance {
                by_instance(&mut samples);
            }
            log.debug(&format!(
                "Read {} sample(s), printing them...",
                samples.len()
            ));
            for s in &samples {
                print_sample(topic.name(), s);
            }
        }
        if access {
            subscriber.end_access();
        }
        iterations += 1;
        log.debug(&format!("Subscriber iteration: <{iterations}>"));
        if o.num_iterations != 0 && iterations >= o.num_iterations {
            break;
        }
        sleep_watching(o.read_period, stop, || poll(&mut watches));
    }
    Ok(())
}

/// The order `take_next_instance()` / `read_next_instance()` hand samples out in when
/// called until nothing is left: instance after instance (by handle), each instance's
/// samples in order. One `take()` and this stable sort give the same samples in the same
/// order as walking the instances with `take_next_instance`, in one call.
fn by_instance(samples: &mut [Sample<ShapeType>]) {
    samples.sort_by_key(|s| s.info.instance_handle);
}

fn print_sample(topic: &str, s: &Sample<ShapeType>) {
    if let Some(data) = &s.data {
        println!("{}", sample_line(topic, data));
    }
    // A sample that only reports a state change holds just the key: the color.
    let Some(shape) = s.value() else { return };
    match s.info.instance_state {
        InstanceState::Alive => {}
        state @ (InstanceState::NotAliveNoWriters | InstanceState::NotAliveDisposed) => {
            println!("{}", instance_state_line(topic, &shape.color, state.name()));
        }
    }
}
