//! The publishing side: one writer per topic, each writing every instance (color) once per
//! iteration, the shape moving and bouncing in a 240 × 270 area as in the suite's
//! application.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ferrodds::{DataWriter, DomainParticipant, Publisher, Topic};

use super::options::{FinalState, ShapeOptions};
use super::shape::{sample_line, ShapeType};
use super::status::{Stop, Watch};
use super::{qos, Failure, Log};

/// The drawing area of the suite's application.
const WIDTH: i32 = 240;
const HEIGHT: i32 = 270;

/// A small xorshift generator: where the shape starts and how fast it moves need no more.
struct Random(u64);

impl Random {
    fn seeded() -> Random {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        Random((nanos ^ u64::from(std::process::id()) << 32) | 1)
    }

    /// A number in `0..n`.
    fn below(&mut self, n: u32) -> i32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % u64::from(n.max(1))) as i32
    }

    /// A velocity: 1 to 5, either way.
    fn velocity(&mut self) -> i32 {
        let v = self.below(5) + 1;
        if self.below(2) == 1 {
            -v
        } else {
            v
        }
    }
}

/// The moving shape.
struct Mover {
    shape: ShapeType,
    xvel: i32,
    yvel: i32,
}

impl Mover {
    fn step(&mut self) {
        let s = &mut self.shape;
        s.x += self.xvel;
        s.y += self.yvel;
        if s.x < 0 {
            s.x = 0;
            self.xvel = -self.xvel;
        }
        if s.x > WIDTH {
            s.x = WIDTH;
            self.xvel = -self.xvel;
        }
        if s.y < 0 {
            s.y = 0;
            self.yvel = -self.yvel;
        }
        if s.y > HEIGHT {
            s.y = HEIGHT;
            self.yvel = -self.yvel;
        }
    }
}

/// The publisher and its writers, created as the suite's application creates them
/// (printing each).
pub(super) fn create(
    participant: &DomainParticipant,
    topics: &[Topic<ShapeType>],
    o: &ShapeOptions,
    log: &Log,
) -> Result<(Publisher, Vec<DataWriter<ShapeType>>), Failure> {
    if o.datafrag_size > 0 {
        return Err(log.not_supported(
            "Data Fragmentation Size (--datafrag-size) = not supported: FerroDDS chooses the fragment size itself",
        ));
    }
    let partition: Vec<&str> = o.partition.as_deref().into_iter().collect();
    let mut publisher = participant.create_publisher(&partition);
    if let Some(p) = qos::presentation(o, log) {
        publisher = publisher.with_presentation(p);
    }
    let writer_qos = qos::writer(o);
    log.debug(&format!("Data Writer QoS: {:?}", writer_qos.policies()));
    let color = o.color.clone().unwrap_or_default();
    let mut writers = Vec::new();
    for topic in topics {
        println!("Create writer for topic: {} color: {color}", topic.name());
        let writer = publisher
            .create_writer(topic, writer_qos.clone())
            .map_err(|e| log.init_error(&format!("failed to create datawriter: {e}")))?;
        writers.push(writer);
    }
    Ok((publisher, writers))
}

/// Writes until stopped or the iterations are done; then unregisters or disposes if asked,
/// and waits (up to a second) for the readers to acknowledge everything.
pub(super) fn run(
    publisher: &Publisher,
    writers: &[DataWriter<ShapeType>],
    topics: &[Topic<ShapeType>],
    o: &ShapeOptions,
    log: &Log,
    stop: &Stop,
) -> Result<(), Failure> {
    let mut random = Random::seeded();
    let shape = ShapeType {
        color: o.color.clone().unwrap_or_default(),
        x: random.below(WIDTH as u32),
        y: random.below(HEIGHT as u32),
        shapesize: o.shapesize,
        additional_payload_size: vec![255; o.additional_payload_size as usize],
    };
    let mut mover = Mover {
        shape,
        xvel: random.velocity(),
        yvel: random.velocity(),
    };
    let colors = o.instance_colors();
    let mut watches: Vec<Watch> = topics.iter().map(|t| Watch::new(t.name())).collect();
    let poll = |watches: &mut [Watch]| {
        for (w, watch) in writers.iter().zip(watches.iter_mut()) {
            watch.poll_writer(w);
        }
    };
    let mut iterations = 0u32;
    while !stop.stopped() {
        mover.step();
        if o.shapesize == 0 {
            let s = &mut mover.shape.shapesize;
            *s = if o.size_modulo > 0 {
                (*s % i32::try_from(o.size_modulo).unwrap_or(i32::MAX)) + 1
            } else {
                s.saturating_add(1)
            };
        }
        // As the suite's application: a set holds `--coherent-sample-count` iterations
        // (samples per writer and instance).
        let count = if o.coherent || o.ordered {
            o.coherent_sample_count
        } else {
            0
        };
        if count != 0 && iterations.is_multiple_of(count) {
            println!("Started Coherent Set");
            publisher.begin_coherent_changes();
        }
        for (writer, topic) in writers.iter().zip(topics) {
            for color in &colors {
                mover.shape.color.clone_from(color);
                if let Err(e) = writer.write(&mover.shape) {
                    log.debug(&format!("write failed: {e}"));
                }
                if o.print_writer_samples {
                    println!("{}", sample_line(topic.name(), &mover.shape));
                }
            }
        }
        if count != 0 && iterations % count == count - 1 {
            println!("Finished Coherent Set");
            if let Err(e) = publisher.end_coherent_changes() {
                log.debug(&format!("end_coherent_changes failed: {e}"));
            }
        }
        poll(&mut watches);
        sleep_watching(o.write_period, stop, || poll(&mut watches));
        iterations += 1;
        log.debug(&format!("Publisher iteration: <{iterations}>"));
        if o.num_iterations != 0 && iterations >= o.num_iterations {
            break;
        }
    }
    if let Some(fin) = o.final_state {
        for writer in writers {
            for color in &colors {
                mover.shape.color.clone_from(color);
                let result = match fin {
                    FinalState::Unregister => writer.unregister(&mover.shape),
                    FinalState::Dispose => writer.dispose(&mover.shape),
                };
                if let Err(e) = result {
                    log.debug(&format!("unregister/dispose failed: {e}"));
                }
            }
        }
    }
    for writer in writers {
        // As the suite's application: give the readers a moment to have everything.
        let _ = writer.wait_for_acknowledgments(Duration::from_secs(1));
    }
    poll(&mut watches);
    Ok(())
}

/// Sleeps `period` in short steps, polling the statuses, until stopped.
pub(super) fn sleep_watching(period: Duration, stop: &Stop, mut poll: impl FnMut()) {
    const STEP: Duration = Duration::from_millis(10);
    let end = std::time::Instant::now() + period;
    loop {
        let now = std::time::Instant::now();
        if now >= end || stop.stopped() {
            return;
        }
        std::thread::sleep(STEP.min(end - now));
        poll();
    }
}
