"""Rust FerroDDS in the loop: `json_peer` (crates/ferrodds/examples/json_peer.rs, built by
`cargo test`) finds the topic's type over XTypes type lookup and publishes or prints
samples as JSON, against ferrodds (Python) and cyclonedds-python, both directions, with the
keyed appendable and mutable types of `common.py`. TRANSIENT_LOCAL on both sides, so that
which end matches first does not decide what arrives."""

import json
import os
import subprocess
import time

import pytest

from common import make_types
from test_interop import Side

DOMAIN = 50  # its own: test_in_process.py has 46
TIMEOUT = 15.0
HERE = os.path.dirname(os.path.abspath(__file__))
PEER = os.environ.get("FERRODDS_JSON_PEER") or os.path.join(
    HERE, "..", "..", "..", "target", "debug", "examples", "json_peer")
F = make_types("ferrodds")
CASES = [("Everything", "everything"), ("Mutable", "mutable")]


@pytest.fixture(scope="module")
def sides():
    if not os.path.exists(PEER):
        pytest.fail(f"{PEER} is missing: `cargo test` (or `cargo build --example json_peer`) "
                    "builds it")
    return {"ferrodds": Side("ferrodds", DOMAIN), "cyclonedds": Side("cyclonedds", DOMAIN)}


def expected_json(make):
    return [json.loads(F[make](i).to_json()) for i in range(1, 7)]


@pytest.mark.parametrize("package", ["ferrodds", "cyclonedds"])
@pytest.mark.parametrize("type_name,make", CASES)
def test_python_to_rust(sides, package, type_name, make):
    topic = f"rust_sub_{type_name}_{package}"
    writer = sides[package].writer(topic, type_name, transient_local=True)
    for i in range(1, 7):
        writer.write(sides[package].types[make](i))
    out = subprocess.run([PEER, "sub", str(DOMAIN), topic, "6", "transient-local"],
                         capture_output=True, text=True, timeout=TIMEOUT + 10)
    assert out.returncode == 0, out.stderr
    got = [json.loads(line) for line in out.stdout.splitlines()]
    assert got == expected_json(make)


@pytest.mark.parametrize("package", ["ferrodds", "cyclonedds"])
@pytest.mark.parametrize("type_name,make", CASES)
def test_rust_to_python(sides, package, type_name, make):
    topic = f"rust_pub_{type_name}_{package}"
    reader = sides[package].reader(topic, type_name, transient_local=True)
    lines = "".join(F[make](i).to_json() + "\n" for i in range(1, 7))
    peer = subprocess.Popen([PEER, "pub", str(DOMAIN), topic, "transient-local"],
                            stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peer.stdin.write(lines)
    peer.stdin.close()
    got = []
    deadline = time.monotonic() + TIMEOUT
    while len(got) < 6 and time.monotonic() < deadline:
        got.extend(s for s in reader.take(N=6) if s.sample_info.valid_data)
        time.sleep(0.02)
    assert peer.wait(timeout=TIMEOUT + 5) == 0, peer.stderr.read()
    expected = [sides[package].types[make](i) for i in range(1, 7)]
    assert [g.serialize() for g in got] == [e.serialize() for e in expected]
