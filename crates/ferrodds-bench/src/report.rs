//! The markdown section of `docs/benchmarks.md`: tables of ours beside Cyclone's, how they
//! were measured, and on what. It replaces only what lies between the suite's markers.

use std::fmt::Write as _;

use crate::parse::RoundTrip;
use crate::results::{Agg, Results};
use crate::suite::{Variant, CYCLONE_DOMAIN, MAX_DATAGRAM, OURS_DOMAIN};

/// The first marker.
pub(crate) const BEGIN: &str = "<!-- suite:begin -->";
/// The last marker.
pub(crate) const END: &str = "<!-- suite:end -->";

/// `doc` with `section` between the markers (added at the end when absent).
pub(crate) fn splice(doc: &str, section: &str) -> String {
    let section = section.trim_end();
    if let (Some(b), Some(e)) = (doc.find(BEGIN), doc.find(END)) {
        if b < e {
            return format!("{}{BEGIN}\n{section}\n{}", &doc[..b], &doc[e..]);
        }
    }
    let mut out = doc.trim_end().to_string();
    out.push_str(&format!("\n\n{BEGIN}\n{section}\n{END}\n"));
    out
}

/// A payload size as people write it: 64 B, 16 KiB, 1 MiB, 11 MB.
pub(crate) fn size_label(bytes: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= 1_000_000 && bytes.is_multiple_of(1_000_000) {
        format!("{} MB", bytes / 1_000_000)
    } else if bytes >= 1024 && bytes.is_multiple_of(1024) {
        format!("{} KiB", bytes / 1024)
    } else {
        format!("{bytes} B")
    }
}

/// Microseconds with about three significant digits.
pub(crate) fn us(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.2}")
    } else if v < 1000.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// A rate per second with a k/M suffix.
pub(crate) fn rate(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2} M", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.0} k", v / 1e3)
    } else if v >= 1e3 {
        format!("{:.1} k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

/// MB/s.
pub(crate) fn mbps(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

fn percent(share: Option<f64>) -> String {
    share.map_or_else(|| "–".to_string(), |x| format!("{:.0} %", x * 100.0))
}

fn cell(a: Option<Agg>, fmt: fn(f64) -> String) -> String {
    a.map_or_else(|| "–".to_string(), |a| fmt(a.value))
}

fn ratio(num: Option<Agg>, den: Option<Agg>) -> String {
    match (num, den) {
        (Some(n), Some(d)) if d.value > 0.0 => format!("{:.2}", n.value / d.value),
        _ => "–".to_string(),
    }
}

/// `Cyclone p50 | Cyclone p99 | FerroDDS p50 | FerroDDS p99 | ratio p50 | ratio p99`.
fn versus(cyclone: (Option<Agg>, Option<Agg>), ours: (Option<Agg>, Option<Agg>)) -> String {
    format!(
        "{} | {} | {} | {} | {} | {}",
        cell(cyclone.0, us),
        cell(cyclone.1, us),
        cell(ours.0, us),
        cell(ours.1, us),
        ratio(ours.0, cyclone.0),
        ratio(ours.1, cyclone.1)
    )
}

fn lost(n: Option<u64>) -> String {
    n.map_or_else(|| "–".to_string(), |n| n.to_string())
}

/// The share of the cores other work kept busy around the run (the larger of the second
/// before the first pair and the second after the last), when it is a quarter or more.
fn busy_machine(m: &crate::machine::Machine) -> Option<f64> {
    let busy = [m.cpu_busy_before, m.cpu_busy_after]
        .into_iter()
        .flatten()
        .fold(None, |acc: Option<f64>, x| {
            Some(acc.map_or(x, |a| a.max(x)))
        })?;
    (busy >= 0.25).then_some(busy)
}

/// The section between the markers.
pub(crate) fn render(r: &Results) -> String {
    let mut s = String::new();
    let p = &r.plan;
    let m = &r.machine;
    let reps = if p.reps == 1 {
        "1 repetition".to_string()
    } else {
        format!("{} repetitions", p.reps)
    };
    let _ = writeln!(
        s,
        "## Suite: FerroDDS beside Cyclone DDS (`scripts/bench`)\n"
    );
    if p.quick {
        let _ = writeln!(
            s,
            "**Quick run** (`scripts/bench --quick`): one short repetition of a few cases, to \
             check that the suite works. Not figures to compare; the full suite \
             (`scripts/bench`) replaces this section.\n"
        );
    }
    if let Some(busy) = busy_machine(m) {
        let _ = writeln!(
            s,
            "**The machine was busy**: other work kept {:.0} % of its {} cores busy around \
             the run (in the second before the first pair or after the last), so it competed \
             with the pairs; the figures are noisy and pessimistic.\n",
            busy * 100.0,
            m.nproc
        );
    }
    let _ = writeln!(
        s,
        "Measured {} by `scripts/bench` ({reps}, {:.1} minutes in all). Machine: {} × {}, \
         Linux {}; load average (1, 5, 15 min) {} before, {} after; cores busy with other \
         work {} before, {} after. Cyclone DDS: `ddsperf` \
         from Debian's cyclonedds-tools {}. FerroDDS: commit {}, `ferrodds perf` (release \
         build, {}). UDP floor: `crates/ferrodds-bench/c/udp_floor.c`, {} `-O2`. Every \
         run's per-second lines: `docs/bench/results.json`.\n",
        r.date,
        r.minutes,
        m.nproc,
        m.cpu,
        m.kernel,
        m.load_before,
        m.load_after,
        percent(m.cpu_busy_before),
        percent(m.cpu_busy_after),
        m.ddsperf_version,
        m.ferrodds_commit,
        m.rustc,
        m.gcc
    );
    let _ = writeln!(
        s,
        "How: every case runs Cyclone's pair (`ddsperf` ↔ `ddsperf`, domain {CYCLONE_DOMAIN}) \
         and ours (`ferrodds perf` ↔ `ferrodds perf`, domain {OURS_DOMAIN}) one after the \
         other, in the opposite order on every other repetition, one pair at a time, on \
         loopback only (`lo`; ddsperf through `CYCLONEDDS_URI`, multicast for SPDP only), \
         with the same settings: reliable, KEEP_ALL data, ping and pong KEEP_LAST 1, topic \
         KS (`seq`, `@key keyval`, a sequence of octets), samples taken in a listener, \
         everything else default. A payload is the whole KS sample, its 12 fixed bytes \
         included (both tools' `size`).\n"
    );
    let _ = writeln!(
        s,
        "Both tools batch writes by default, and the suite leaves them so: ddsperf 0.10.2 \
         turns on Cyclone's write batching itself (`dds_write_set_batch (true);` right after \
         creating its participant, `src/tools/ddsperf/ddsperf.c` line 2264 at tag 0.10.2), \
         so its publisher's samples share datagrams (it flushes only when its rate makes it \
         wait; unlimited here, so a datagram goes out when full), and it flushes after \
         every ping and pong; `ferrodds perf pub` batches likewise unless given \
         `--no-batch`, and its pings and pongs are not batched. So the latency runs send \
         one datagram per ping and pong in both tools, and the throughput runs compare \
         batched publishers.\n"
    );

    if r.sections.latency {
        latency(&mut s, r);
    }
    if r.sections.throughput {
        throughput(&mut s, r);
    }
    if r.shm && (r.sections.latency || r.sections.throughput) {
        shared_memory(&mut s, r);
    }
    if r.sections.loans && !r.loans.is_empty() {
        loans(&mut s, r);
    }
    if r.sections.study && !r.study.is_empty() {
        study(&mut s, r);
    }
    if r.sections.matrix {
        matrix(&mut s, r);
    }
    if r.sections.idle {
        idle(&mut s, r);
    }

    let mut notes: Vec<String> = r.notes.clone();
    notes.extend(r.failures());
    if !notes.is_empty() {
        let _ = writeln!(s, "### Notes\n");
        for n in notes {
            let _ = writeln!(s, "- {n}");
        }
        let _ = writeln!(s);
    }
    s
}

fn latency(s: &mut String, r: &Results) {
    let p = &r.plan;
    let _ = writeln!(s, "### Latency: ping ↔ pong\n");
    let _ = writeln!(
        s,
        "Full round trip in µs (ddsperf prints half round trips; they are doubled here). One \
         ping in flight: the next goes out when the pong is back. Each run pings for {} s; \
         both tools print one line per second with that second's percentiles (ddsperf over \
         the first 20,000 round trips of the second, ours over all of them, in an HDR \
         histogram). A run's figure is the median, over its steady seconds (every second \
         with round trips but the first, which holds matching and the first cold round \
         trips, and but a partial last one), of that second's percentile; the table gives \
         the median over the repetitions. Ratio = FerroDDS / Cyclone: below 1, FerroDDS is \
         faster. Round trips/s is the rate over the steady seconds.\n",
        p.latency_seconds
    );
    let _ = writeln!(
        s,
        "| payload | Cyclone p50 | Cyclone p99 | FerroDDS p50 | FerroDDS p99 | ratio p50 | ratio p99 | round trips/s Cyclone / FerroDDS |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|");
    for &size in &p.latency_sizes {
        let p50_p99 = |v| (r.latency(size, v, |x| x.p50), r.latency(size, v, |x| x.p99));
        let _ = writeln!(
            s,
            "| {} | {} | {} / {} |",
            size_label(size),
            versus(p50_p99(Variant::Cyclone), p50_p99(Variant::Ours)),
            cell(r.latency_rate(size, Variant::Cyclone), rate),
            cell(r.latency_rate(size, Variant::Ours), rate)
        );
    }
    let _ = writeln!(s);

    let _ = writeln!(
        s,
        "### Latency: FerroDDS busy-poll, and the raw UDP floor\n"
    );
    let _ = writeln!(
        s,
        "Same runs, same statistic. Busy-poll: `ferrodds perf ping --busy-poll` ↔ `pong \
         --busy-poll` (receive threads spin instead of blocking){}. UDP floor: two \
         processes bounce one datagram over 127.0.0.1 ({:.1} s per size and mode after \
         0.5 s of warm-up; percentiles over every round trip), both blocking in `recv` or \
         both spinning on a non-blocking `recv`; the 64 KiB row sends {MAX_DATAGRAM} B, the \
         largest UDP datagram. Reference published for these machines: 22.1 µs blocking / \
         6.6 µs busy at 64 B, 48 / 35 µs at 64 KB. Busy-polling needs a core per spinning \
         thread: on 2 cores the floor's busy mode takes both.\n",
        if r.busy_poll {
            ""
        } else {
            "; **not run**: this `ferrodds perf` does not accept `--busy-poll`"
        },
        p.floor_seconds
    );
    let _ = writeln!(
        s,
        "| payload | busy-poll p50 | busy-poll p99 | ratio p50 vs Cyclone | UDP blocking p50 | UDP blocking p99 | UDP busy p50 | UDP busy p99 |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|");
    for &size in &p.latency_sizes {
        let fsize = size.min(MAX_DATAGRAM);
        let b50 = r.latency(size, Variant::OursBusyPoll, |x| x.p50);
        let b99 = r.latency(size, Variant::OursBusyPoll, |x| x.p99);
        let c50 = r.latency(size, Variant::Cyclone, |x| x.p50);
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            size_label(size),
            cell(b50, us),
            cell(b99, us),
            ratio(b50, c50),
            cell(r.floor(fsize, "block", |x| x.p50), us),
            cell(r.floor(fsize, "block", |x| x.p99), us),
            cell(r.floor(fsize, "busy", |x| x.p50), us),
            cell(r.floor(fsize, "busy", |x| x.p99), us),
        );
    }
    let _ = writeln!(s, "\n![Round trip by payload](bench/latency.svg)\n");
}

/// `samples/s | MB/s | lost` of `v` at `size`, and its MB/s for a ratio.
fn throughput_cells(r: &Results, size: u64, v: Variant) -> (String, Option<Agg>) {
    let mb = r.throughput(size, v, |f| f.mb_per_s);
    let cells = format!(
        "{} | {} | {}",
        cell(r.throughput(size, v, |f| f.samples_per_s), rate),
        cell(mb, mbps),
        lost(r.lost(size, v))
    );
    (cells, mb)
}

fn throughput(s: &mut String, r: &Results) {
    let p = &r.plan;
    let _ = writeln!(s, "### Throughput: pub → sub, reliable KEEP_ALL\n");
    let _ = writeln!(
        s,
        "Measured at the subscriber. Each run publishes for {} s as fast as the writer \
         accepts samples (a KEEP_ALL writer blocks while its readers lag). Rate = samples \
         received in the steady seconds (every per-second line with data but the first \
         and the last, in which the publisher started and stopped) / their duration; \
         MB/s = 10⁶ bytes of samples per second; lost = samples the subscriber saw missing \
         (sequence gaps), summed over the repetitions (reliable: should be 0). The tables \
         give the median over the repetitions. Both publishers batch writes (each tool's \
         default, above). Ratio = FerroDDS MB/s / Cyclone MB/s: above 1, FerroDDS is \
         faster.\n",
        p.throughput_seconds
    );
    let _ = writeln!(
        s,
        "| payload | Cyclone samples/s | Cyclone MB/s | lost | FerroDDS samples/s | FerroDDS MB/s | lost | ratio FerroDDS / Cyclone |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|");
    for &size in &p.throughput_sizes {
        let (cyclone, c_mb) = throughput_cells(r, size, Variant::Cyclone);
        let (ours, o_mb) = throughput_cells(r, size, Variant::Ours);
        let label = size_label(size);
        let _ = writeln!(
            s,
            "| {label} | {cyclone} | {ours} | {} |",
            ratio(o_mb, c_mb)
        );
    }
    let _ = writeln!(
        s,
        "\nFor information, not the comparison: FerroDDS unbatched, `ferrodds perf pub \
         --no-batch` (each sample its own datagram), beside FerroDDS batched from the table \
         above{}. Ratio = unbatched MB/s / batched MB/s.\n",
        if r.no_batch {
            ""
        } else {
            " (**not run**: this `ferrodds perf pub` does not accept `--no-batch`)"
        }
    );
    let _ = writeln!(
        s,
        "| payload | FerroDDS unbatched samples/s | MB/s | lost | ratio unbatched / batched |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|");
    for &size in &p.throughput_sizes {
        let (unbatched, u_mb) = throughput_cells(r, size, Variant::OursNoBatch);
        let b_mb = r.throughput(size, Variant::Ours, |f| f.mb_per_s);
        let label = size_label(size);
        let _ = writeln!(s, "| {label} | {unbatched} | {} |", ratio(u_mb, b_mb));
    }
    let _ = writeln!(s, "\n![Throughput by payload](bench/throughput.svg)\n");
}

fn shared_memory(s: &mut String, r: &Results) {
    let p = &r.plan;
    let _ = writeln!(s, "### Shared memory: FerroDDS processes of one host\n");
    let _ = writeln!(
        s,
        "The same pairs with `--transport shm` on both sides (every other FerroDDS row of \
         this page is `--transport udp`): each RTPS datagram goes through the receiving \
         participant's iceoryx2 inbox instead of the loopback interface. Cyclone's figures \
         are its UDP rows above, measured in the same runs; the UDP floor is the blocking \
         one. memcpy = a payload's bytes copied from one buffer into another in the \
         bench's own process, as many times a second as it can (copies/s), between the \
         runs, rotating through {} MiB of buffers on each side so that large payloads \
         come from memory and not from the cache.\n",
        crate::suite::MEMCPY_SPAN >> 20
    );
    if r.sections.latency {
        let _ = writeln!(
            s,
            "| payload | shm p50 | shm p99 | ratio p50 vs Cyclone UDP | ratio p50 vs FerroDDS UDP | ratio p50 vs UDP floor (blocking) |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|---|");
        for &size in &p.latency_sizes {
            let m50 = r.latency(size, Variant::OursShm, |x| x.p50);
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} |",
                size_label(size),
                cell(m50, us),
                cell(r.latency(size, Variant::OursShm, |x| x.p99), us),
                ratio(m50, r.latency(size, Variant::Cyclone, |x| x.p50)),
                ratio(m50, r.latency(size, Variant::Ours, |x| x.p50)),
                ratio(m50, r.floor(size.min(MAX_DATAGRAM), "block", |x| x.p50)),
            );
        }
        let _ = writeln!(s);
    }
    if r.sections.throughput {
        let _ = writeln!(
            s,
            "| payload | shm samples/s | shm MB/s | lost | ratio vs Cyclone UDP | ratio vs FerroDDS UDP | memcpy copies/s | ratio shm / memcpy |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|---|---|---|");
        for &size in &p.throughput_sizes {
            let (cells, m_mb) = throughput_cells(r, size, Variant::OursShm);
            let m_rate = r.throughput(size, Variant::OursShm, |f| f.samples_per_s);
            let copies = r.memcpy(size);
            let _ = writeln!(
                s,
                "| {} | {cells} | {} | {} | {} | {} |",
                size_label(size),
                ratio(m_mb, r.throughput(size, Variant::Cyclone, |f| f.mb_per_s)),
                ratio(m_mb, r.throughput(size, Variant::Ours, |f| f.mb_per_s)),
                cell(copies, rate),
                ratio(m_rate, copies),
            );
        }
        let _ = writeln!(s);
    }
}

fn loans(s: &mut String, r: &Results) {
    let p = &r.plan;
    let _ = writeln!(s, "### Shared memory, 64 B to 4 MiB: copied and lent\n");
    let _ = writeln!(
        s,
        "Round trips between two FerroDDS processes over shared memory, as above (one ping \
         in flight, reliable, KEEP_LAST 1, {}-second runs, the same statistic). Copied: \
         topic KS (`ping --size N`), serialized and sent as RTPS datagrams through the \
         receiver's inbox, a copy in and a copy out of the segment. Lent: \
         `ping --loan --size N` ↔ `pong --loan --size N`, a plain type of N bytes \
         (`struct Lent {{ unsigned long seq; octet data[N-4]; }}`) lent by the writer from \
         its sample channel, its sequence number written in place (4 bytes: the rest is \
         left as it is), and taken by the reader where it lies; a thread waiting for data \
         takes on both sides. Flat = p50 at the size / p50 at {}.\n",
        p.latency_seconds,
        p.loan_sizes
            .first()
            .map_or_else(|| "?".into(), |&b| size_label(b)),
    );
    let _ = writeln!(
        s,
        "| payload | copied p50 | copied p99 | lent p50 | lent p99 | lent busy-poll p50 | lent busy-poll p99 | lent / copied p50 | flat: lent | flat: lent busy-poll |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|---|");
    let first = p.loan_sizes.first().copied().unwrap_or(64);
    let at = |size, v, f: fn(&RoundTrip) -> f64| r.loan_latency(size, v, f);
    for &size in &p.loan_sizes {
        let copied = at(size, Variant::OursShm, |x| x.p50);
        let lent = at(size, Variant::OursShmLoan, |x| x.p50);
        let busy = at(size, Variant::OursShmLoanBusy, |x| x.p50);
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            size_label(size),
            cell(copied, us),
            cell(at(size, Variant::OursShm, |x| x.p99), us),
            cell(lent, us),
            cell(at(size, Variant::OursShmLoan, |x| x.p99), us),
            cell(busy, us),
            cell(at(size, Variant::OursShmLoanBusy, |x| x.p99), us),
            ratio(lent, copied),
            ratio(lent, at(first, Variant::OursShmLoan, |x| x.p50)),
            ratio(busy, at(first, Variant::OursShmLoanBusy, |x| x.p50)),
        );
    }
    let _ = writeln!(s);
    if r.throughput
        .iter()
        .any(|t| t.run.variant == Variant::OursShmLoan)
    {
        let _ = writeln!(
            s,
            "Throughput lent: `pub --loan --size N` → `sub --loan --size N` (reliable \
             KEEP_ALL, {} s, the same statistic as the throughput rows), the sequence number \
             the only bytes written or read; beside the copied shared-memory rows and the \
             memcpy of the section above.\n",
            p.throughput_seconds
        );
        let _ = writeln!(
            s,
            "| payload | copied samples/s | lent samples/s | lent MB/s | lost | lent / copied | memcpy copies/s | lent / memcpy |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|---|---|---|");
        for &size in &p.throughput_sizes {
            let copied = r.throughput(size, Variant::OursShm, |f| f.samples_per_s);
            let lent = r.throughput(size, Variant::OursShmLoan, |f| f.samples_per_s);
            let copies = r.memcpy(size);
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                size_label(size),
                cell(copied, rate),
                cell(lent, rate),
                cell(
                    r.throughput(size, Variant::OursShmLoan, |f| f.mb_per_s),
                    mbps
                ),
                lost(r.lost(size, Variant::OursShmLoan)),
                ratio(lent, copied),
                cell(copies, rate),
                ratio(lent, copies),
            );
        }
        let _ = writeln!(s);
    }
}

fn study(s: &mut String, r: &Results) {
    let Some(st) = r.plan.study else { return };
    let _ = writeln!(
        s,
        "### Large samples in bursts (a published Fast DDS / Cyclone DDS study, reproduced)\n"
    );
    let _ = writeln!(
        s,
        "{} samples written in bursts of {} at {} bursts/s asked for (more than any row \
         reaches: the bursts go back to back, and a KEEP_ALL writer blocks until there is \
         room), reliable, KEEP_ALL, publisher and subscriber in two processes, {} runs of {} s \
         per row, alternating the order of the rows; the subscriber's samples/s over its \
         steady seconds, per run. Synchronous: the writing thread sends; asynchronous \
         (`--asynchronous`, Fast DDS's ASYNCHRONOUS_PUBLISH_MODE): a write queues the sample \
         and the participant's timer thread sends it. Cyclone DDS 0.10.2 has no \
         asynchronous mode (ddsperf `pub {}Hz burst {}`).\n",
        size_label(st.size),
        st.burst,
        st.rate,
        st.runs,
        st.seconds,
        st.rate,
        st.burst
    );
    let _ = writeln!(
        s,
        "| row | runs | mean samples/s | standard deviation | median | median vs Cyclone UDP |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|");
    let cyclone = crate::stats::median(&r.study_rates(Variant::Cyclone));
    for (variant, label) in [
        (Variant::OursShm, "FerroDDS shared memory, synchronous"),
        (
            Variant::OursShmAsync,
            "FerroDDS shared memory, asynchronous",
        ),
        (Variant::Ours, "FerroDDS UDP"),
        (Variant::Cyclone, "Cyclone DDS UDP"),
    ] {
        let rates = r.study_rates(variant);
        let Some((mean, sd)) = crate::stats::mean_sd(&rates) else {
            continue;
        };
        let median = crate::stats::median(&rates);
        let versus = match (median, cyclone) {
            (Some(m), Some(c)) if c > 0.0 => format!("{:.2}", m / c),
            _ => "–".to_string(),
        };
        let _ = writeln!(
            s,
            "| {label} | {} | {} | {} | {} | {versus} |",
            rates.len(),
            rate(mean),
            rate(sd),
            median.map_or_else(|| "–".to_string(), rate),
        );
    }
    let _ = writeln!(s);
}

fn idle(s: &mut String, r: &Results) {
    let _ = writeln!(s, "### Idle: wake-ups of a pong nobody pings\n");
    let _ = writeln!(
        s,
        "Each tool's pong runs alone (`ddsperf pong`, `ferrodds perf pong`); after {} s its \
         threads' context switches (voluntary and not, `/proc/<pid>/task/*/status`) are \
         counted over {} s. Each is a wake-up of a thread that slept (or was pushed off its \
         core): what an idle participant costs a machine that has other work. Median over \
         the repetitions; ratio = FerroDDS / Cyclone.\n",
        crate::suite::IDLE_SETTLE.as_secs(),
        r.plan.idle_seconds
    );
    let _ = writeln!(
        s,
        "| | Cyclone wake-ups/s | FerroDDS wake-ups/s | ratio | threads Cyclone / FerroDDS |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|");
    let one = |v: f64| format!("{v:.1}");
    let whole = |v: f64| format!("{v:.0}");
    let _ = writeln!(
        s,
        "| idle pong | {} | {} | {} | {} / {} |\n",
        cell(r.idle(Variant::Cyclone, false), one),
        cell(r.idle(Variant::Ours, false), one),
        ratio(
            r.idle(Variant::Ours, false),
            r.idle(Variant::Cyclone, false)
        ),
        cell(r.idle(Variant::Cyclone, true), whole),
        cell(r.idle(Variant::Ours, true), whole)
    );
}

fn matrix(s: &mut String, r: &Results) {
    let p = &r.plan;
    let _ = writeln!(s, "### Keyed latency matrix (OpenDDSharp's LatencyTest)\n");
    let _ = writeln!(
        s,
        "OpenDDSharp's LatencyTest writes `totalSamples` rounds over `totalInstances` keyed \
         instances, one sample at a time, and times each sample until its reader has it. \
         Here a cell is a ping/pong run (one ping in flight, as above) with `-n instances` \
         on both sides, measured over the first steady seconds that hold instances × \
         samples per instance round trips (ddsperf has no count option, so the suite \
         stops either tool's ping once its per-second lines show that many; whole \
         seconds, so at least that many, and at most {} s of pinging); figures as above, \
         over those seconds. **`-n` does not reach the pings, in either tool**: \
         ddsperf 0.10.2 applies `-n` only to its data writer (`pub`) and to the \
         subscriber's loss accounting; its pings always carry key value 0 and its ping and \
         pong readers and writers keep the last 1 sample, and `ferrodds perf ping` does the \
         same. So the instance count changes nothing on the wire for either tool, and the \
         mapping is the same for both: a cell measures the payload's round trip over a \
         window of instances × samples round trips. Full round trip, µs; ratio = FerroDDS / \
         Cyclone.\n",
        p.matrix_max_seconds
    );
    let _ = writeln!(
        s,
        "| payload | instances | samples / instance | round trips measured Cyclone / FerroDDS | Cyclone p50 | Cyclone p99 | FerroDDS p50 | FerroDDS p99 | ratio p50 | ratio p99 |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|---|");
    for &c in &p.matrix {
        let p50_p99 = |v| (r.matrix(c, v, |f| f.rtt.p50), r.matrix(c, v, |f| f.rtt.p99));
        let count = |v| {
            cell(r.matrix(c, v, |f| f.roundtrips as f64), |n| {
                format!("{n:.0}")
            })
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} / {} | {} |",
            size_label(c.size),
            c.instances,
            c.samples_per_instance,
            count(Variant::Cyclone),
            count(Variant::Ours),
            versus(p50_p99(Variant::Cyclone), p50_p99(Variant::Ours))
        );
    }
    let _ = writeln!(s);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_goes_between_the_markers_only() {
        let doc = "# B\n\ntext\n";
        let once = splice(doc, "one\n");
        assert_eq!(once, format!("# B\n\ntext\n\n{BEGIN}\none\n{END}\n"));
        let twice = splice(&format!("{once}after\n"), "two");
        assert_eq!(
            twice,
            format!("# B\n\ntext\n\n{BEGIN}\ntwo\n{END}\nafter\n")
        );
    }

    #[test]
    fn a_busy_machine_is_told() {
        let mut m = crate::machine::Machine {
            nproc: 2,
            cpu_busy_before: Some(0.02),
            cpu_busy_after: Some(0.1),
            ..Default::default()
        };
        assert_eq!(busy_machine(&m), None);
        m.cpu_busy_after = Some(0.55);
        assert_eq!(busy_machine(&m), Some(0.55));
        m.cpu_busy_before = None;
        m.cpu_busy_after = None;
        assert_eq!(busy_machine(&m), None);
    }

    #[test]
    fn labels() {
        assert_eq!(size_label(64), "64 B");
        assert_eq!(size_label(2048), "2 KiB");
        assert_eq!(size_label(65_536), "64 KiB");
        assert_eq!(size_label(65_507), "65507 B");
        assert_eq!(size_label(1_048_576), "1 MiB");
        assert_eq!(size_label(11_000_000), "11 MB");
        assert_eq!(us(6.614), "6.61");
        assert_eq!(us(48.04), "48.0");
        assert_eq!(us(1234.5), "1234");
        assert_eq!(rate(31_234.0), "31 k");
        assert_eq!(rate(1234.0), "1.2 k");
        assert_eq!(rate(2_500_000.0), "2.50 M");
        assert_eq!(mbps(0.5), "0.500");
    }
}
