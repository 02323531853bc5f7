//! The Rust side of the Python benchmark (`benches/matrix.py`): the same protocol
//! as `benches/python/pingpong.py`, with the type derived, so that "Python" and "native"
//! run the same exchange.
//!
//! ```text
//! pingpong pong DOMAIN
//! pingpong ping DOMAIN INSTANCES SAMPLES_PER_INSTANCE SIZE
//! pingpong both DOMAIN INSTANCES SAMPLES_PER_INSTANCE SIZE   (ping and pong in one process)
//! pingpong sub  DOMAIN COUNT
//! pingpong pub  DOMAIN COUNT SIZE
//! ```

use std::process::ExitCode;
use std::time::{Duration, Instant};

use ferrodds::{DataReader, DataWriter, DomainParticipant, Qos};
use ferrodds_cdr::{Cdr, Octet};

/// `struct Sample { @key int32 id; uint32 seq; sequence<octet> payload; }`
#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(final, type_name = "bench::Sample")]
struct Sample {
    #[cdr(key)]
    id: i32,
    seq: u32,
    // Octet, not u8: `Vec<u8>` is IDL `sequence<uint8>`, a type of its own in XTypes,
    // and the Python side's `bytes` is `sequence<octet>`; the same type lets a Rust ping
    // meet a Python pong.
    payload: Vec<Octet>,
}

const WAIT: Duration = Duration::from_secs(20);

struct Ends {
    writer: DataWriter<Sample>,
    reader: DataReader<Sample>,
    _participant: DomainParticipant,
}

fn ends(domain: u32, out_topic: &str, in_topic: &str, keep_all: bool) -> Result<Ends, String> {
    let p = DomainParticipant::builder()
        .and_then(|b| b.domain_id(domain).build())
        .map_err(|e| e.to_string())?;
    let qos = |q: Qos| {
        let q = q.reliable().max_blocking_time(Duration::from_secs(10));
        if keep_all {
            q.keep_all().max_samples(10_000)
        } else {
            q.keep_last(1)
        }
    };
    let out = p
        .create_topic::<Sample>(out_topic)
        .map_err(|e| e.to_string())?;
    let inp = p
        .create_topic::<Sample>(in_topic)
        .map_err(|e| e.to_string())?;
    Ok(Ends {
        writer: p
            .create_writer(&out, qos(Qos::writer()))
            .map_err(|e| e.to_string())?,
        reader: p
            .create_reader(&inp, qos(Qos::reader()))
            .map_err(|e| e.to_string())?,
        _participant: p,
    })
}

/// The samples taken, in slots kept from one take to the next: `take_into` decodes each
/// sample into the one its slot holds, so a stream of large samples reuses their buffers
/// (as the C and C# benches take into the samples they keep).
type Slots = Vec<ferrodds::Sample<Sample>>;

/// Waits up to `timeout` for samples and takes up to 256 of them: the ones with data.
fn take<'a>(
    reader: &DataReader<Sample>,
    slots: &'a mut Slots,
    timeout: Duration,
) -> impl Iterator<Item = &'a Sample> {
    let n = if reader.wait_for_data(timeout) {
        reader.take_into(slots, 256)
    } else {
        0
    };
    slots[..n].iter().filter_map(|s| s.data.as_ref())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pingpong: {e}");
            ExitCode::FAILURE
        }
    }
}

fn arg<T: std::str::FromStr>(args: &[String], i: usize) -> Result<T, String> {
    args.get(i)
        .and_then(|a| a.parse().ok())
        .ok_or_else(|| format!("argument {i} missing or not a number"))
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let role = args.first().map(String::as_str).unwrap_or("");
    let domain: u32 = arg(&args, 1)?;
    match role {
        "pong" => pong(domain),
        "ping" => ping(domain, arg(&args, 2)?, arg(&args, 3)?, arg(&args, 4)?),
        "both" => {
            // Two participants of one process, each on a thread of its own: they reach
            // each other through the in-process queue.
            let ponging = std::thread::spawn(move || pong(domain));
            let pinged = ping(domain, arg(&args, 2)?, arg(&args, 3)?, arg(&args, 4)?);
            let ponged = ponging.join().map_err(|_| "the pong thread panicked")?;
            pinged.and(ponged)
        }

        "sub" => {
            let count: usize = arg(&args, 2)?;
            let e = ends(domain, "bench_unused", "bench_data", true)?;
            let (mut n, mut first, mut last) = (0usize, None, None);
            let deadline = Instant::now() + Duration::from_secs(600);
            let mut slots = Slots::new();
            while n < count && Instant::now() < deadline {
                let got = take(&e.reader, &mut slots, Duration::from_secs(1)).count();
                if got > 0 {
                    let now = Instant::now();
                    first.get_or_insert(now);
                    last = Some(now);
                    n += got;
                }
            }
            let seconds = match (first, last) {
                (Some(f), Some(l)) if l > f => (l - f).as_secs_f64(),
                _ => f64::NAN,
            };
            println!(
                "{{\"count\": {n}, \"samples_per_s\": {}}}",
                (n as f64 - 1.0) / seconds
            );
            Ok(())
        }
        "pub" => {
            let (count, size): (usize, usize) = (arg(&args, 2)?, arg(&args, 3)?);
            let e = ends(domain, "bench_data", "bench_unused", true)?;
            e.writer
                .wait_for_matched(1, WAIT)
                .map_err(|e| e.to_string())?;
            std::thread::sleep(Duration::from_millis(200));
            let mut sample = Sample {
                id: 0,
                seq: 0,
                payload: vec![Octet(0); size],
            };
            for k in 0..count {
                sample.id = (k % 100) as i32;
                sample.seq = k as u32;
                e.writer.write(&sample).map_err(|e| e.to_string())?;
            }
            e.writer
                .wait_for_acknowledgments(Duration::from_secs(30))
                .map_err(|e| e.to_string())
        }
        _ => Err("usage: pingpong pong|ping|both|sub|pub DOMAIN ...".into()),
    }
}

fn pong(domain: u32) -> Result<(), String> {
    let e = ends(domain, "bench_pong", "bench_ping", false)?;
    let deadline = Instant::now() + Duration::from_secs(600);
    let mut slots = Slots::new();
    while Instant::now() < deadline {
        for s in take(&e.reader, &mut slots, Duration::from_secs(1)) {
            if s.id < 0 {
                return Ok(());
            }
            e.writer.write(s).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

fn ping(domain: u32, instances: i64, per_instance: i64, size: usize) -> Result<(), String> {
    let e = ends(domain, "bench_ping", "bench_pong", false)?;
    e.writer
        .wait_for_matched(1, WAIT)
        .map_err(|e| e.to_string())?;
    e.reader
        .wait_for_matched(1, WAIT)
        .map_err(|e| e.to_string())?;
    let payload: Vec<Octet> = (0..size).map(|i| Octet(i as u8)).collect();
    let total = instances * per_instance;
    let warmup = total.min(200);
    let mut rtts = Vec::with_capacity(total as usize);
    let mut slots = Slots::new();
    for k in -warmup..total {
        let seq = k as u32;
        let sample = Sample {
            id: (k.rem_euclid(instances)) as i32,
            seq,
            payload: payload.clone(),
        };
        let start = Instant::now();
        e.writer.write(&sample).map_err(|e| e.to_string())?;
        let deadline = start + Duration::from_secs(10);
        'answer: loop {
            let (mut got, mut answered) = (0, false);
            for s in take(&e.reader, &mut slots, Duration::from_secs(1)) {
                got += 1;
                answered |= s.seq == seq;
            }
            if answered {
                break 'answer;
            }
            if Instant::now() > deadline {
                return Err(format!("no answer to {seq}"));
            }
            if got == 0 {
                // A second without an answer: the pong's writer may not have
                // matched this reader when the first ping came (each side waits
                // only for its own matches), so its answer went nowhere. Again.
                e.writer.write(&sample).map_err(|e| e.to_string())?;
            }
        }
        if k >= 0 {
            rtts.push(start.elapsed().as_secs_f64() * 1e6);
        }
    }
    let stop = Sample {
        id: -1,
        seq: 0,
        payload: Vec::new(),
    };
    e.writer.write(&stop).map_err(|e| e.to_string())?;
    std::thread::sleep(Duration::from_millis(200));
    rtts.sort_by(f64::total_cmp);
    let mean = rtts.iter().sum::<f64>() / rtts.len().max(1) as f64;
    println!(
        "{{\"count\": {}, \"p50_us\": {}, \"p90_us\": {}, \"mean_us\": {mean}}}",
        rtts.len(),
        rtts.get(rtts.len() / 2).copied().unwrap_or(f64::NAN),
        rtts.get(rtts.len() * 9 / 10).copied().unwrap_or(f64::NAN),
    );
    Ok(())
}
