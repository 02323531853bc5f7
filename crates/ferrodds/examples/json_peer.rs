//! A Rust peer for any topic, typed at run time: finds the topic's type over XTypes type
//! lookup (from a remote endpoint's TypeInformation), then prints the samples it receives as
//! JSON lines, or publishes the samples it reads as JSON lines from stdin. The Python
//! package's interop tests (`crates/ferrodds-py/tests/test_rust_peer.py`) run it against
//! `ferrodds` and cyclonedds-python.
//!
//! ```text
//! json_peer sub DOMAIN TOPIC COUNT [transient-local]   # COUNT samples, then exits
//! json_peer pub DOMAIN TOPIC [transient-local]         # one sample per stdin line
//! ```
//!
//! Loopback only when `FERRODDS_CONFIG` says so, as every FerroDDS program. Exits non-zero
//! with one line on stderr when something fails or times out.

use std::io::BufRead;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use ferrodds::dynamic::DynamicValue;
use ferrodds::{DomainParticipant, Qos};

const WAIT: Duration = Duration::from_secs(15);

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("json_peer: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: json_peer sub DOMAIN TOPIC COUNT [transient-local] | pub DOMAIN TOPIC [transient-local]";
    let (mode, domain, topic) = match args.as_slice() {
        [mode, domain, topic, ..] => (mode.as_str(), domain, topic),
        _ => return Err(usage.into()),
    };
    let domain: u32 = domain
        .parse()
        .map_err(|_| format!("domain {domain:?} is not a number"))?;
    let transient_local = args.iter().any(|a| a == "transient-local");
    let qos = |base: Qos| {
        let q = base.reliable().keep_last(100);
        if transient_local {
            q.transient_local()
        } else {
            q
        }
    };
    let participant = DomainParticipant::builder()
        .and_then(|b| b.domain_id(domain).build())
        .map_err(|e| format!("participant: {e}"))?;
    let found = participant
        .find_topic(topic, WAIT)
        .map_err(|e| format!("the type of {topic}: {e}"))?;
    let ty = found.dynamic_type().clone();
    match mode {
        "sub" => {
            let count: usize = args
                .get(3)
                .and_then(|c| c.parse().ok())
                .ok_or("sub needs a COUNT")?;
            let reader = participant
                .create_dynamic_reader(&found, qos(Qos::reader()))
                .map_err(|e| format!("reader: {e}"))?;
            let deadline = Instant::now() + WAIT;
            let mut printed = 0;
            while printed < count {
                if Instant::now() > deadline {
                    return Err(format!("{printed} of {count} samples in {WAIT:?}"));
                }
                if !reader.wait_for_data(Duration::from_millis(100)) {
                    continue;
                }
                for s in reader.take().map_err(|e| format!("take: {e}"))? {
                    if let Some(data) = s.data.as_ref().filter(|_| printed < count) {
                        println!("{}", data.to_json(&ty));
                        printed += 1;
                    }
                }
            }
            Ok(())
        }
        "pub" => {
            let writer = participant
                .create_dynamic_writer(&found, qos(Qos::writer()))
                .map_err(|e| format!("writer: {e}"))?;
            if !transient_local {
                writer
                    .wait_for_matched(1, WAIT)
                    .map_err(|e| format!("no reader matched: {e}"))?;
            }
            for (n, line) in std::io::stdin().lock().lines().enumerate() {
                let line = line.map_err(|e| format!("stdin: {e}"))?;
                let json: serde_json::Value = serde_json::from_str(&line)
                    .map_err(|e| format!("line {}: not JSON: {e}", n + 1))?;
                let value = DynamicValue::from_json(&ty, &json)
                    .map_err(|e| format!("line {}: {e}", n + 1))?;
                writer
                    .write(&value)
                    .map_err(|e| format!("line {}: write: {e}", n + 1))?;
            }
            if transient_local {
                // A late joiner takes the history from this writer: stay until it has.
                writer
                    .wait_for_matched(1, WAIT)
                    .map_err(|e| format!("no reader matched: {e}"))?;
            }
            writer
                .wait_for_acknowledgments(WAIT)
                .map_err(|e| format!("not acknowledged: {e}"))
        }
        _ => Err(usage.into()),
    }
}
