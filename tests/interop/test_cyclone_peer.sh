#!/usr/bin/env bash
# Self-test of cyclone_peer.py: Cyclone pub <-> Cyclone sub over loopback.
#
#   bash tests/interop/test_cyclone_peer.sh              # cases one after another
#   bash tests/interop/test_cyclone_peer.sh --parallel   # all cases at once (distinct domains)
#   bash tests/interop/test_cyclone_peer.sh dispose blob # only the named cases
#
# Needs python3 with cyclonedds==11.0.1 and multicast enabled on lo (done here when root).
# Uses DDS domains 200-210. Prints PASS/FAIL per case with its wall time, then
# "N passed, N failed"; exits non-zero when any case fails.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PEER="$HERE/cyclone_peer.py"
PY="${PYTHON:-python3}"

PARALLEL=0
SELECTED=()
for arg in "$@"; do
  case "$arg" in
    --parallel) PARALLEL=1 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) SELECTED+=("$arg") ;;
  esac
done

WORK="$(mktemp -d "${TMPDIR:-/tmp}/cyclone_peer_test.XXXXXX")"
BG_PIDS=()
cleanup() {
  local p
  for p in "${BG_PIDS[@]:-}"; do
    [[ -n "$p" ]] && kill "$p" 2>/dev/null || true
  done
  if [[ "${KEEP_WORK:-0}" == 1 ]]; then echo "work dir kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

# --- environment checks ---------------------------------------------------
timeout 30 "$PY" -c 'import cyclonedds' 2>/dev/null || {
  echo "cyclonedds is not importable by $PY (pip install cyclonedds==11.0.1)" >&2; exit 1; }
if ! timeout 5 ip link show lo | grep -q MULTICAST; then
  if [[ "$(id -u)" == 0 ]]; then
    timeout 5 ip link set lo multicast on
  else
    echo "warning: lo has multicast off and we are not root; discovery will fail" >&2
  fi
fi

# --- helpers ----------------------------------------------------------------
# start_sub OUT_PREFIX ARGS... : cyclone sub in the background, pid in SUB_PID
start_sub() {
  local out="$1"; shift
  timeout 120 "$PY" "$PEER" sub "$@" >"$out.sub.out" 2>"$out.sub.err" &
  SUB_PID=$!
  BG_PIDS+=("$SUB_PID")
}
# run_pub OUT_PREFIX ARGS... : cyclone pub in the foreground; sets PUB_RC
run_pub() {
  local out="$1"; shift
  PUB_RC=0
  timeout 120 "$PY" "$PEER" pub "$@" >"$out.pub.out" 2>"$out.pub.err" || PUB_RC=$?
}
# wait_sub : sets SUB_RC
wait_sub() {
  SUB_RC=0
  wait "$SUB_PID" || SUB_RC=$?
}
# check OUT_PREFIX PYTHON_CODE : run assertions; pub = list of pub JSON lines,
# sub = list of sub JSON lines, both parsed. Raise/assert to fail.
check() {
  local out="$1" code="$2"
  timeout 30 "$PY" - "$out.pub.out" "$out.sub.out" "$code" <<'EOF'
import json, sys
def load(p):
    try:
        return [json.loads(l) for l in open(p, encoding="utf-8") if l.strip()]
    except FileNotFoundError:
        return []
pub, sub = load(sys.argv[1]), load(sys.argv[2])
written = [l for l in pub if "written" in l]
valid = [l for l in sub if l["valid_data"]]
exec(sys.argv[3])
EOF
}
expect_rc() {  # expect_rc WHAT GOT WANT
  if [[ "$2" != "$3" ]]; then echo "$1 exited $2, expected $3" >&2; return 1; fi
}

# --- cases (each uses its own domain) ---------------------------------------
case_reading_reliable() {   # domain 200
  local o="$1"
  start_sub "$o" --domain 200 --topic rr --type reading --count 10 --reliable --timeout 20
  sleep 0.3
  run_pub "$o" --domain 200 --topic rr --type reading --count 10 --reliable --wait-match 10
  wait_sub
  expect_rc pub "$PUB_RC" 0 && expect_rc sub "$SUB_RC" 0 || return 1
  check "$o" '
assert len(written) == 10, written
assert pub[-1]["done"] is True and pub[-1]["acked"] is True, pub[-1]
assert len(valid) == 10, len(valid)
assert all(l["instance_state"] == "ALIVE" for l in sub), sub
got = sorted((l["sample"] for l in valid), key=lambda s: s["stamp"])
assert got == [w["sample"] for w in written], (got, written)
assert got[3]["unit"] == "\u00b0C" and got[3]["pos"] == {"x": 3.0, "y": -3.0, "z": 1.5}
assert got[7]["blob"] == "MTIzNDU2Nw==" and got[7]["values"] == [1.75, 1.75]  # blob: bytes 49..55
'
}

case_reading_best_effort() {   # domain 201
  local o="$1"
  start_sub "$o" --domain 201 --topic be --type reading --count 10 --best-effort --timeout 8
  sleep 0.3
  # --settle: give the reader time to discover the writer too (best-effort data that
  # arrives before that is dropped, which happened under load in --parallel runs)
  run_pub "$o" --domain 201 --topic be --type reading --count 10 --best-effort --wait-match 10 \
    --settle 0.5 --period-ms 10
  wait_sub
  expect_rc pub "$PUB_RC" 0 || return 1
  # best effort: tolerate a timeout (exit 1) as long as at least 8 of 10 arrived
  [[ "$SUB_RC" == 0 || "$SUB_RC" == 1 ]] || { echo "sub exited $SUB_RC" >&2; return 1; }
  check "$o" '
assert len(written) == 10
assert pub[-1]["acked"] is None, pub[-1]
assert len(valid) >= 8, len(valid)
ws = {w["sample"]["stamp"]: w["sample"] for w in written}
assert all(l["sample"] == ws[l["sample"]["stamp"]] for l in valid)
'
}

case_transient_local() {   # domain 202
  local o="$1" pub_pid
  # writer first, no reader yet: writes 5, keeps them (depth 10), lingers 5 s
  timeout 60 "$PY" "$PEER" pub --domain 202 --topic tl --type reading --count 5 --reliable \
    --transient-local --history-depth 10 --no-wait-match --linger 5 \
    >"$o.pub.out" 2>"$o.pub.err" &
  pub_pid=$!; BG_PIDS+=("$pub_pid")
  # start the reader only once all 5 are written (python start-up can be slow under
  # load), plus 1 s, so it really is a late joiner
  local i
  for i in $(seq 1 300); do
    grep -q '"written": 4' "$o.pub.out" 2>/dev/null && break
    sleep 0.1
  done
  grep -q '"written": 4' "$o.pub.out" || { echo "pub did not write within 30 s" >&2; return 1; }
  sleep 1
  start_sub "$o" --domain 202 --topic tl --type reading --count 5 --reliable --transient-local \
    --history-depth 10 --timeout 10
  wait_sub
  PUB_RC=0; wait "$pub_pid" || PUB_RC=$?
  expect_rc pub "$PUB_RC" 0 && expect_rc sub "$SUB_RC" 0 || return 1
  check "$o" '
assert len(written) == 5
assert len(valid) == 5, len(valid)
got = sorted((l["sample"] for l in valid), key=lambda s: s["stamp"])
assert got == [w["sample"] for w in written]
'
}

case_dispose() {   # domain 203
  local o="$1"
  start_sub "$o" --domain 203 --topic dp --type reading --count 10 --reliable --expect-dispose \
    --timeout 20
  sleep 0.3
  run_pub "$o" --domain 203 --topic dp --type reading --count 10 --reliable --dispose 1 \
    --linger 2
  wait_sub
  expect_rc pub "$PUB_RC" 0 && expect_rc sub "$SUB_RC" 0 || return 1
  check "$o" '
assert {"disposed": {"sensor_id": 1, "name": "sensor-1"}} in pub, pub
assert len(valid) == 10
disposed = [l for l in sub if l["instance_state"] == "NOT_ALIVE_DISPOSED"]
assert disposed, sub
# only instance 1 was disposed (autodispose is off, and the sub exits before the pub)
assert all(l["sample"]["sensor_id"] == 1 and l["sample"]["name"] == "sensor-1" for l in disposed), disposed
assert all(l["instance_state"] == "ALIVE" for l in sub if l["sample"]["sensor_id"] != 1)
'
}

case_blob_16mib() {   # domain 204
  local o="$1"
  start_sub "$o" --domain 204 --topic blob --type blob --count 1 --reliable --keep-all --timeout 90
  sleep 0.3
  run_pub "$o" --domain 204 --topic blob --type blob --count 1 --reliable --keep-all \
    --blob-size 16777216 --ack-timeout 60
  wait_sub
  expect_rc pub "$PUB_RC" 0 && expect_rc sub "$SUB_RC" 0 || return 1
  check "$o" '
import hashlib
assert len(written) == 1 and pub[-1]["acked"] is True, pub
period = bytes((k * 31 + 0) % 256 for k in range(256))
expect = hashlib.sha256(period * (16777216 // 256)).hexdigest()
assert written[0]["sha256"] == expect, written[0]
assert len(valid) == 1
assert valid[0]["sample"] == {"id": 0, "len": 16777216, "sha256": expect}, valid[0]
'
}

case_no_match_exit2() {   # domain 205
  local o="$1"
  run_pub "$o" --domain 205 --topic nobody --type blob --count 1 --wait-match 1
  expect_rc pub "$PUB_RC" 2 || return 1
  [[ "$(wc -l <"$o.pub.err")" == 1 ]] && grep -q "no matched reader" "$o.pub.err" \
    || { cat "$o.pub.err" >&2; return 1; }
  [[ ! -s "$o.pub.out" ]] || { echo "pub wrote to stdout" >&2; return 1; }
}

case_sub_timeout_exit1() {   # domain 206
  local o="$1"
  start_sub "$o" --domain 206 --topic nobody --type reading --count 3 --timeout 1
  wait_sub
  expect_rc sub "$SUB_RC" 1 || return 1
  [[ "$(wc -l <"$o.sub.err")" == 1 ]] && grep -q "got 0/3 valid samples" "$o.sub.err" \
    || { cat "$o.sub.err" >&2; return 1; }
}

ALL_CASES=(reading_reliable reading_best_effort transient_local dispose blob_16mib
           no_match_exit2 sub_timeout_exit1)
if [[ ${#SELECTED[@]} -gt 0 ]]; then CASES=("${SELECTED[@]}"); else CASES=("${ALL_CASES[@]}"); fi
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

run_case() {   # run_case NAME : writes $WORK/NAME.result = "PASS|FAIL seconds"
  local name="$1" o="$WORK/$1" t0 t1 status=PASS
  t0=$(date +%s.%N)
  ( set +e; "case_$name" "$o" ) >"$o.case.log" 2>&1 || status=FAIL
  t1=$(date +%s.%N)
  echo "$status $(elapsed "$t0" "$t1")" >"$o.result"
}

T_START=$(date +%s.%N)
if [[ "$PARALLEL" == 1 ]]; then
  case_pids=()
  for c in "${CASES[@]}"; do run_case "$c" & case_pids+=($!); done
  for p in "${case_pids[@]}"; do wait "$p" || true; done
else
  for c in "${CASES[@]}"; do run_case "$c"; done
fi

passed=0; failed=0
for c in "${CASES[@]}"; do
  read -r status secs <"$WORK/$c.result"
  printf '%-4s %-22s %7ss\n' "$status" "$c" "$secs"
  if [[ "$status" == PASS ]]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    for f in "$WORK/$c".{case.log,pub.out,pub.err,sub.out,sub.err}; do
      [[ -s "$f" ]] && { echo "---- ${f##*/}"; head -c 4000 "$f"; echo; }
    done
  fi
done
echo "total wall time $(elapsed "$T_START" "$(date +%s.%N)")s"
echo "$passed passed, $failed failed"
[[ "$failed" == 0 ]]
