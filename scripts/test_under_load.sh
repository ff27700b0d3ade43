#!/usr/bin/env bash
# Run the test suite, or its multi-process, Ray, PostgreSQL and browser parts, next to CPU-bound
# busy processes (issue 27): the tests wait for states, so every one must pass on a loaded
# machine as on a quiet one.
#
#   scripts/test_under_load.sh                     # the README's command (-n 3): the whole suite
#   scripts/test_under_load.sh multiprocess ray    # only these parts (any of: multiprocess,
#                                                  # ray, postgres, browser)
#   BUSY=4 scripts/test_under_load.sh browser -- -x   # 4 busy processes; after --: pytest's
#
# It starts $BUSY (default 2) busy processes (`python -c 'while True: pass'`), a throwaway
# PostgreSQL cluster as .ci/run does (unless SWEEPBENCH_TEST_POSTGRES is set, or PostgreSQL is
# missing: its tests then skip), runs pytest, and stops everything it started on exit. It
# prints the load average it saw (sampled every 5 s) and pytest's summary; its exit status is
# pytest's.
set -euo pipefail
cd "$(dirname "$0")/.."

BUSY="${BUSY:-2}"
parts=()
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --) shift; extra=("$@"); break ;;
    multiprocess|ray|postgres|browser|all) parts+=("$1"); shift ;;
    *) echo "unknown part '$1' (multiprocess, ray, postgres, browser, all; pytest's after --)" >&2
       exit 2 ;;
  esac
done

# Each part's test files (a file may be in several parts; it runs once).
MULTIPROCESS="tests/bench/test_bench_workers.py tests/bench/test_bench_stop.py
  tests/bench/test_bench_sweep_kill.py tests/bench/test_claims.py tests/bench/test_kill_resume.py
  tests/bench/test_run_claims.py tests/bench/test_served_model_at_scale.py
  tests/bench/test_dialogue_run.py tests/money/test_ledger_processes.py tests/sweeps/test_sweep_crash.py
  tests/engine/test_ratelimit_shared.py tests/money/test_ledger.py tests/sweeps/test_sweep_live.py"
RAY="tests/bench/test_bench_ray.py tests/bench/test_ray_address_unreachable.py"
POSTGRES="tests/bench/test_on_postgres.py tests/money/test_ledger.py tests/money/test_ledger_scopes.py
  tests/store/test_store.py tests/money/test_ledger_processes.py tests/engine/test_ratelimit_shared.py
  tests/bench/test_bench_ray.py"
BROWSER="tests/web tests/leaderboard/test_chart_browser.py tests/cli/test_cli_first_hour.py"

targets=()
for part in "${parts[@]}"; do
  case "$part" in
    multiprocess) targets+=($MULTIPROCESS) ;;
    ray) targets+=($RAY) ;;
    postgres) targets+=($POSTGRES) ;;
    browser) targets+=($BROWSER) ;;
    all) targets=(); parts=(); break ;;
  esac
done
if [ ${#targets[@]} -gt 0 ]; then
  mapfile -t targets < <(printf '%s\n' "${targets[@]}" | awk '!seen[$0]++')
fi

workdir="$(mktemp -d)"
busy_pids=()
sampler_pid=""
pg_started=""
cleanup() {
  for pid in "${busy_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ -n "$sampler_pid" ] && kill "$sampler_pid" 2>/dev/null || true
  if [ -n "$pg_started" ]; then as_pg pg_ctl -D "$workdir/pg/data" -m fast stop >/dev/null 2>&1 || true; fi
  rm -rf "$workdir"
}
trap cleanup EXIT
as_pg() { if [ "$(id -u)" = "0" ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

# PostgreSQL, as .ci/run starts it: a cluster on a free local port, for this run only.
PG_BIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
if [ -z "${SWEEPBENCH_TEST_POSTGRES:-}" ] && { command -v initdb >/dev/null 2>&1 || [ -n "$PG_BIN" ]; }; then
  PATH="$PATH:$PG_BIN"
  mkdir -p "$workdir/pg"
  [ "$(id -u)" = "0" ] && chown postgres "$workdir/pg" && chmod 755 "$workdir"
  PG_PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  if as_pg initdb -D "$workdir/pg/data" -A trust -U sweepbench >/dev/null \
     && as_pg pg_ctl -D "$workdir/pg/data" -o "-p $PG_PORT -k $workdir/pg -c listen_addresses=127.0.0.1" \
          -l "$workdir/pg/log" -w start >/dev/null \
     && as_pg createdb -h 127.0.0.1 -p "$PG_PORT" -U sweepbench sweepbench; then
    pg_started=1
    export SWEEPBENCH_TEST_POSTGRES="postgresql+psycopg://sweepbench@127.0.0.1:$PG_PORT/sweepbench"
  else
    echo "PostgreSQL could not be started; its tests will be skipped"
  fi
fi

for _ in $(seq "$BUSY"); do
  python3 -c 'while True: pass' &
  busy_pids+=($!)
done
( while true; do cut -d' ' -f1 /proc/loadavg >>"$workdir/load"; sleep 5; done ) &
sampler_pid=$!

echo "== $BUSY busy processes (${busy_pids[*]}) on $(nproc) cores; parts: ${parts[*]:-all}"
started=$(date +%s)
set +e
python -m pytest -q -n 3 --dist loadgroup "${targets[@]}" "${extra[@]}" 2>&1 | tee "$workdir/out"
status=${PIPESTATUS[0]}
set -e
took=$(( $(date +%s) - started ))
echo "== load average (1 min) seen: $(sort -n "$workdir/load" | head -1) to $(sort -n "$workdir/load" | tail -1)," \
  "median $(sort -n "$workdir/load" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'), over ${took} s"
echo "== pytest: $(grep -E '^[0-9]+ (passed|failed)|^=+ .*(passed|failed|error)' "$workdir/out" | tail -1) (exit $status)"
exit "$status"
