"""Programs written for cyclonedds-python (examples/python/programs/) run unchanged on
ferrodds once their imports say ``ferrodds``: each publisher/subscriber pair runs with both
packages and across them, and the subscriber prints the same lines in all four."""

import os
import re
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "..", "..", "..", "examples", "python", "programs")
DOMAIN = 47


def variant(tmp_path, package: str) -> str:
    """The programs with their imports naming ``package``; nothing else changes."""
    out = tmp_path / package
    out.mkdir()
    for name in os.listdir(PROGRAMS):
        if name.endswith(".py"):
            text = open(os.path.join(PROGRAMS, name)).read()
            if package != "cyclonedds":
                text = re.sub(r"^from cyclonedds\.", f"from {package}.", text, flags=re.M)
            (out / name).write_text(text)
    return str(out)


@pytest.mark.parametrize("pub_package,sub_package", [
    ("cyclonedds", "cyclonedds"), ("ferrodds", "ferrodds"),
    ("ferrodds", "cyclonedds"), ("cyclonedds", "ferrodds")])
def test_vehicles(tmp_path, pub_package, sub_package):
    topic = f"vehicles_{pub_package}_{sub_package}"
    count = 7
    dirs = {p: variant(tmp_path, p) for p in {pub_package, sub_package}}
    sub_dir, pub_dir = dirs[sub_package], dirs[pub_package]
    sub = subprocess.Popen([sys.executable, "vehicles_sub.py", str(DOMAIN), topic, str(count)],
                           cwd=sub_dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    pub = subprocess.run([sys.executable, "vehicles_pub.py", str(DOMAIN), topic, str(count)],
                         cwd=pub_dir, capture_output=True, text=True, timeout=60)
    out, err = sub.communicate(timeout=60)
    assert pub.returncode == 0, pub.stderr
    assert sub.returncode == 0, f"{out}\n{err}"
    lines = out.splitlines()
    assert len(lines) == count + 2
    assert lines[-2:] == ["disposed 0: True", "listener called: True"]
    expected = open(os.path.join(HERE, "vehicles.expected")).read().splitlines()
    assert lines == expected
