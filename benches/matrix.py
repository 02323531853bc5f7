"""OpenDDSharp's latency and throughput matrices, for FerroDDS from Python (beside Rust
native, the JSON path, cyclonedds-python and RTI Connext's Python connector) or from C and C#
(beside Rust native), in one run.

    scripts/bench-python [--quick] [--reps N]      (--section python)
    scripts/bench-csharp [--quick] [--reps N]      (--section csharp)

Each cell runs every implementation's pair of processes (benches/python/pingpong.py,
benches/c/pingpong.c, benches/csharp/PingPong.cs, and crates/ferrodds/examples/pingpong.rs
for Rust native), the implementations in a different order on each repetition; a cell's
figure is the median over the repetitions, and the ratios are to Rust native measured in the
same run. Writes docs/bench/<section>.json and the section of docs/benchmarks.md. Loopback
only.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
PY_APP = os.path.join(ROOT, "benches", "python", "pingpong.py")
RUST_APP = os.path.join(ROOT, "target", "release", "examples", "pingpong")
# benches/c/pingpong.c over the C API, built by scripts/bench-python into target/release.
C_APP = os.path.join(ROOT, "target", "release", "pingpong-c")
# benches/csharp/PingPong.cs and the binding, built by scripts/bench-csharp.
CS_DIR = os.path.join(ROOT, "target", "csharp-bench")
DOMAIN = 100
IMPLS = {"python": ["rust", "ferrodds", "ferrodds-json-text", "ferrodds-json", "cyclonedds", "rti"],
         "csharp": ["rust", "c", "csharp", "csharp-json"]}
# The same two with `transport.wait_spin_us` set (latency only): their waits spin before
# they sleep. No other implementation here has such a setting.
SPIN_IMPLS = ["rust+spin", "ferrodds+spin"]
LABEL = {"rust": "Rust native", "c": "C (ferrodds.h)", "ferrodds": "ferrodds (Python, CDR)",
         "ferrodds-json-text": "ferrodds (Python, JSON text)",
         "ferrodds-json": "ferrodds (Python, JSON + `json`)",
         "cyclonedds": "cyclonedds-python 11",
         "rti": "RTI connector 1.2 (Connext 6.1)",
         "rust+spin": "Rust native, waits spin",
         "ferrodds+spin": "ferrodds (Python, CDR), waits spin",
         "csharp": "C# (CDR, Mono)", "csharp-json": "C# (JSON, Mono)"}
SPIN_US = 200


def command(impl, role, *args):
    impl = impl.removesuffix("+spin")
    if impl == "rust":
        return [RUST_APP, role, str(DOMAIN), *map(str, args)]
    if impl == "c":
        return [C_APP, role, str(DOMAIN), *map(str, args)]
    if impl in ("csharp", "csharp-json"):
        mode = "json" if impl == "csharp-json" else "cdr"
        return ["mono", os.path.join(CS_DIR, "PingPong.exe"), mode, role, str(DOMAIN),
                *map(str, args)]
    return [sys.executable, PY_APP, role, impl, str(DOMAIN), *map(str, args)]


# The runs' FerroDDS configuration files, removed when the matrices are done (a directory
# per run left over two thousand behind in /tmp).
CONFIG_DIR = tempfile.TemporaryDirectory(prefix="bench-python-")


def env(impl):
    e = dict(os.environ)
    config = os.path.join(CONFIG_DIR.name, f"{impl}.toml")
    with open(config, "w") as f:
        f.write('[transport]\ninterface = "lo"\n')
        if impl.endswith("+spin"):
            f.write(f"wait_spin_us = {SPIN_US}\n")
    e["FERRODDS_CONFIG"] = config
    # The C# binding loads libferrodds_c.so from the library path.
    e["LD_LIBRARY_PATH"] = ":".join(
        p for p in (os.path.join(ROOT, "target", "release"), e.get("LD_LIBRARY_PATH")) if p)
    e["CYCLONEDDS_URI"] = (
        '<CycloneDDS><Domain id="any"><General><Interfaces>'
        '<NetworkInterface name="lo" multicast="true"/></Interfaces>'
        '<AllowMulticast>spdp</AllowMulticast></General></Domain></CycloneDDS>')
    return e


def pair(impl, server_role, server_args, client_role, client_args, timeout):
    """Runs the server side, then the client; the JSON line the measuring side printed."""
    e = env(impl)
    server = subprocess.Popen(command(impl, server_role, *server_args), env=e,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.3)
    try:
        client = subprocess.run(command(impl, client_role, *client_args), env=e,
                                capture_output=True, text=True, timeout=timeout)
        # The server ends on the client's stop sample, or when its peer is gone; a client
        # that failed sent none.
        out, err = server.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        server.communicate()
        return None
    for text in (client.stdout, out):
        for line in text.splitlines():
            if line.startswith("{"):
                return json.loads(line)
    sys.stderr.write(f"{impl} {client_role}: {client.stderr[-300:]} {err[-300:]}\n")
    return None


def latency(impl, instances, per_instance, size):
    """The ping's line: p50_us, and alloc_bytes (managed bytes per round trip) from C#."""
    return pair(impl, "pong", [size], "ping", [instances, per_instance, size], 900)


def throughput(impl, count, size):
    """The subscriber's line: samples_per_s, and alloc_bytes (per sample taken) from C#."""
    return pair(impl, "sub", [count], "pub", [count, size], 900)


def run(cells, fn, key, impls, reps):
    """{cell: {impl: (median of key, [key of each run], median alloc_bytes or None)}}."""
    results = {}
    for cell in cells:
        lines = {i: [] for i in impls}
        for rep in range(reps):
            order = impls[rep % len(impls):] + impls[: rep % len(impls)]
            for impl in order:
                r = fn(impl, *cell)
                print(f"{fn.__name__} {cell} {impl}: {r}", flush=True)
                if r is not None:
                    lines[impl].append(r)
        results[cell] = {}
        for i, rs in lines.items():
            v = [r[key] for r in rs]
            alloc = [r["alloc_bytes"] for r in rs if "alloc_bytes" in r]
            results[cell][i] = (statistics.median(v) if v else None, v,
                                statistics.median(alloc) if alloc else None)
    return results


def kib(size):
    return f"{size // 1024} KiB"


def table(results, impls, header, fmt, ratio, native="rust"):
    lines = ["| " + " | ".join(header + [LABEL[i] for i in impls]) + " |",
             "|" + "---|" * (len(header) + len(impls))]
    for cell, by_impl in results.items():
        base = by_impl[native][0]
        row = fmt(cell)
        for i in impls:
            v = by_impl[i][0]
            if v is None:
                row.append("failed")
            elif i == native or base is None:
                row.append(f"{v:,.0f}")
            else:
                row.append(f"{v:,.0f} ({ratio(v, base):.2f}x)")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def spin_table(lat):
    """The spinning pair, ratio to spinning native, and Python's ratio to cyclonedds-python
    (which sleeps: it has no such setting)."""
    lines = ["| instances × samples | payload | " + " | ".join(LABEL[i] for i in SPIN_IMPLS)
             + " | ferrodds spinning / cyclonedds-python |", "|" + "---|" * 5]
    for (n, per, size), by_impl in lat.items():
        native, py = by_impl["rust+spin"][0], by_impl["ferrodds+spin"][0]
        cyclone = by_impl.get("cyclonedds", (None,))[0]
        cells = [f"{n} × {per}", kib(size), "failed" if native is None else f"{native:,.0f}",
                 "failed" if py is None else
                 f"{py:,.0f}" + (f" ({py / native:.2f}x)" if native else ""),
                 f"{py / cyclone:.2f}x" if py and cyclone else "—"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def spin_section(lat):
    return f"""
The same round trips with waits that spin up to {SPIN_US} µs before they sleep
(`transport.wait_spin_us = {SPIN_US}` in `FERRODDS_CONFIG`, for both the Rust and the Python
side; docs/configuration.md): a sample that arrives during the spin is seen without the
scheduler waking the thread. Over shared memory, whose waiting threads already poll as
long as the traffic's gaps, they save nothing measurable on two cores (compare the table
above). Median µs, ratio to spinning Rust native, and the spinning
Python side's ratio to cyclonedds-python above:

{spin_table(lat)}
"""


def python_section(lat, thr, impls, spin, how):
    return f"""<!-- python-bench:start -->
## Python: OpenDDSharp's matrices

`scripts/bench-python` ({how}). Every implementation runs the same
exchange (`benches/python/pingpong.py`; Rust native: `crates/ferrodds/examples/pingpong.rs`):
`struct Sample {{ @key int32 id; uint32 seq; sequence<octet> payload; }}`, reliable, loopback,
two processes, the pong writing back the sample it took (the JSON columns: the text, or
the values). Rust native takes with `DataReader::take_into`, into the samples of its last
take, as the C and C# sides take (until session 26 it decoded each sample into a new one,
and its subscriber moved a third as many 64 KiB samples: glibc gave each take's freed
buffers back to the kernel, and the next take paid for every page again; "Issue 13,
session 26" above). FerroDDS's processes (Rust native, Python) reach each other through shared
memory, their default between participants of one host (a thread waiting for data polls the inbox itself
as long as the traffic's recent gaps, up to 250 µs, before it sleeps: docs/architecture.md); cyclonedds-python and RTI's connector through UDP. Round trips this
short are at the mercy of two cores shared by four busy threads: the cells differ by 2-3x
between neighbours. Ratios are to Rust native in the same run. The JSON columns hand FerroDDS
JSON text and take JSON text (its JSON view: a sequence of octets is base64); "JSON text"
keeps the text as text (a bridge to web clients would: the pong relays it, the ping formats
it), "JSON + `json`" turns it into dictionaries and `bytes` with Python's `json` and
`base64` modules, as OpenDDSharp's JSON path hands its application objects. RTI's writers of samples larger than
63,000 bytes publish asynchronously (Connext 6.1 fragments only then; RTI's perftest does the
same), with its defaults otherwise.

Round trip, median µs (instances × samples per instance, payload), ratio to native:

{table(lat, impls, ["instances × samples", "payload"], lambda c: [f"{c[0]} × {c[1]}", kib(c[2])], lambda v, n: v / n)}
{spin_section(lat) if spin else ""}
Throughput, samples/s (samples, payload), ratio to native (higher is better):

{table(thr, impls, ["samples", "payload"], lambda c: [f"{c[0]:,}", kib(c[1])], lambda v, n: v / n)}
<!-- python-bench:end -->"""


def alloc_table(results, impls, header, fmt):
    """Managed bytes allocated per sample (per round trip for latency), medians."""
    lines = ["| " + " | ".join(header + [LABEL[i] for i in impls]) + " |",
             "|" + "---|" * (len(header) + len(impls))]
    for cell, by_impl in results.items():
        row = fmt(cell) + [("—" if by_impl[i][2] is None else f"{by_impl[i][2]:,.0f} B")
                           for i in impls]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def csharp_section(lat, thr, impls, how):
    cs = [i for i in impls if i.startswith("csharp")]
    lat_fmt = lambda c: [f"{c[0]} × {c[1]}", kib(c[2])]  # noqa: E731
    thr_fmt = lambda c: [f"{c[0]:,}", kib(c[1])]  # noqa: E731
    return f"""<!-- csharp-bench:start -->
## C and C#: OpenDDSharp's matrices

`scripts/bench-csharp` ({how}). Every implementation runs the exchange of the Python
section (`struct Sample {{ @key int32 id; uint32 seq; sequence<octet> payload; }}`,
reliable, loopback, two processes that reach each other through shared memory): Rust native
(`crates/ferrodds/examples/pingpong.rs`, taking with `take_into` into the samples of its
last take), C through `ferrodds.h` (`benches/c/pingpong.c`, which relays the bytes it took
and gives them back with `ferrodds_return_loan`), and C# on Debian's Mono 6.8 through the binding
(`benches/csharp/PingPong.cs`). "C# (CDR)" samples are the class and CDR code that
`ferrodds idl --lang csharp` generates, serialized in C# and taken with `TakeReusing` (into
the objects of the last take); "C# (JSON)" turns each object
into JSON text and back with the JSON code the same command generates beside the CDR code
(`ToJson` into a reused `JsonWriter`; `TakeJsonReusing` hands each sample's UTF-8 text to
`FromJson`, into the objects of the last take; FerroDDS's JSON view, the payload as base64)
and hands FerroDDS the text, as OpenDDSharp's JSON path does. Until session 20 the JSON
column used Mono's `System.Json` (a document object, `Convert` for base64): 4–50× native
then, 5,600 µs and 607 samples/s at 64 KiB. Both C# pongs take
each sample as an object and write that object back. Ratios are to Rust native in the same run.

Round trip, median µs (instances × samples per instance, payload), ratio to native:

{table(lat, impls, ["instances × samples", "payload"], lat_fmt, lambda v, n: v / n)}

Throughput, samples/s (samples, payload), ratio to native (higher is better):

{table(thr, impls, ["samples", "payload"], thr_fmt, lambda v, n: v / n)}

Managed memory the measuring C# thread allocated (`GC.GetAllocatedBytesForCurrentThread`),
median: per round trip (a write and a take) on the ping, per sample taken on the subscriber:

{alloc_table(lat, cs, ["instances × samples", "payload"], lat_fmt)}

{alloc_table(thr, cs, ["samples", "payload"], thr_fmt)}

A subscriber's figure includes the growth of its pool of samples: a reusing take keeps as
many as its largest batch held, and a subscriber that falls behind takes up to 256 at
once (the bound the Rust and Python sides take with), each a new sample with its own
payload the first time. A ping's takes, a sample at a time, allocate nothing.
<!-- csharp-bench:end -->"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--section", choices=sorted(IMPLS), default="python")
    ap.add_argument("--quick", action="store_true", help="one size, fewer samples")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--impls", help="a comma-separated subset (default: the section's)")
    ap.add_argument("--no-spin", action="store_true",
                    help="leave out the latency runs with spinning waits")
    a = ap.parse_args()
    impls = a.impls.split(",") if a.impls else IMPLS[a.section]
    spin = (a.section == "python" and not a.no_spin and "rust" in impls
            and "ferrodds" in impls)
    if a.quick:
        lat_cells = [(100, 10, 8192)]
        thr_cells = [(2000, 8192)]
    else:
        # OpenDDSharp's grid, at the ends of its ranges: 100 and 1000 instances, 10 and 30
        # samples per instance, 10,000 and 200,000 samples; 2, 8 and 64 KiB.
        lat_cells = [(i, s, b) for i in (100, 1000) for s in (10, 30)
                     for b in (2048, 8192, 65536)]
        thr_cells = [(n, b) for n in (10000, 200000) for b in (2048, 8192, 65536)]
    started = time.time()
    lat = run(lat_cells, latency, "p50_us", impls + (SPIN_IMPLS if spin else []), a.reps)
    thr = run(thr_cells, throughput, "samples_per_s", impls, a.reps)
    minutes = (time.time() - started) / 60
    machine = f"{platform.machine()}, {os.cpu_count()} cores, {platform.platform()}"
    try:
        cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                   if l.startswith("model name"))
        machine = f"{cpu}, " + machine
    except (OSError, StopIteration):
        pass
    os.makedirs(os.path.join(ROOT, "docs", "bench"), exist_ok=True)
    with open(os.path.join(ROOT, "docs", "bench", f"{a.section}.json"), "w") as f:
        json.dump({"machine": machine, "reps": a.reps, "minutes": minutes,
                   "latency_p50_us": {str(k): v for k, v in lat.items()},
                   "throughput_samples_per_s": {str(k): v for k, v in thr.items()}},
                  f, indent=1)
    how = (f"{'--quick, ' if a.quick else ''}{a.reps} repetitions, implementations\n"
           f"alternated, medians; {minutes:.0f} minutes on {machine}")
    if a.section == "python":
        section = python_section(lat, thr, impls, spin, how)
    else:
        section = csharp_section(lat, thr, impls, how)
    start, end = f"<!-- {a.section}-bench:start -->", f"<!-- {a.section}-bench:end -->"
    path = os.path.join(ROOT, "docs", "benchmarks.md")
    text = open(path).read()
    if start in text:
        before = text.split(start)[0]
        after = text.split(end, 1)[1]
        text = before + section + after
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    with open(path, "w") as f:
        f.write(text)
    print(section)


if __name__ == "__main__":
    main()
