#!/usr/bin/env bash
# Local single-node Apache Kafka (KRaft) built from Maven Central artifacts.
#   infra/kafka/kafka.sh start    resolve jars (once), format storage (once), start, wait until it answers
#   infra/kafka/kafka.sh stop     stop the broker started here
#   infra/kafka/kafka.sh status   running or not, and where
#   infra/kafka/kafka.sh topics   create every topic listed in libs/contracts
#   infra/kafka/kafka.sh reset    stop and delete its data
# Environment: KAFKA_PORT (9092), KAFKA_CONTROLLER_PORT (9093), KAFKA_DATA_DIR (infra/kafka/.data),
#              KAFKA_HEAP (512m), JAVA_HOME (optional).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
port="${KAFKA_PORT:-9092}"
cport="${KAFKA_CONTROLLER_PORT:-9093}"
data="${KAFKA_DATA_DIR:-$here/.data}"
heap="${KAFKA_HEAP:-512m}"
java="${JAVA_HOME:+$JAVA_HOME/bin/}java"
pidfile="$data/kafka.pid"
log="$data/kafka.log"

log() { printf '[kafka] %s\n' "$*" >&2; }

resolve_jars() {
  if [ -f "$here/lib/.complete" ]; then return; fi
  log "resolving org.apache.kafka:kafka_2.13 and its runtime dependencies with Maven"
  rm -rf "$here/lib"
  mvn -q -B -f "$here/pom.xml" dependency:copy-dependencies \
    -DoutputDirectory="$here/lib" -DincludeScope=runtime
  touch "$here/lib/.complete"
}

is_running() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

answers() { (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }

run_class() { "$java" -Xms128m -Xmx"$heap" -cp "$here/lib/*" -Dlog4j.configuration="file:$here/log4j.properties" "$@"; }

start() {
  resolve_jars
  mkdir -p "$data"
  if is_running; then log "already running (pid $(cat "$pidfile")) on 127.0.0.1:$port"; return; fi
  sed -e "s#@PORT@#$port#g" -e "s#@CONTROLLER_PORT@#$cport#g" -e "s#@DATA_DIR@#$data#g" \
    "$here/server.properties" > "$data/server.properties"
  if [ ! -f "$data/logs/meta.properties" ]; then
    log "formatting storage in $data/logs"
    run_class kafka.tools.StorageTool format --standalone -t "$(run_class kafka.tools.StorageTool random-uuid)" \
      -c "$data/server.properties" >> "$log" 2>&1
  fi
  log "starting on 127.0.0.1:$port"
  nohup "$java" -Xms128m -Xmx"$heap" -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true \
    -cp "$here/lib/*" -Dlog4j.configuration="file:$here/log4j.properties" \
    -Dkafka.logs.dir="$data" kafka.Kafka "$data/server.properties" >> "$log" 2>&1 &
  echo $! > "$pidfile"
  for _ in $(seq 1 120); do
    if ! is_running; then log "broker exited; last lines of $log:"; tail -n 30 "$log" >&2; exit 1; fi
    if answers && grep -q 'Kafka Server started' "$log"; then log "ready (pid $(cat "$pidfile"))"; return; fi
    sleep 0.5
  done
  log "not ready after 60 s; see $log"; exit 1
}

stop() {
  if ! is_running; then log "not running"; rm -f "$pidfile"; return; fi
  local pid; pid="$(cat "$pidfile")"
  kill "$pid"
  for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || { rm -f "$pidfile"; log "stopped"; return; }; sleep 0.5; done
  log "still running after 30 s, killing"; kill -9 "$pid" 2>/dev/null || true; rm -f "$pidfile"
}

status() {
  if is_running; then echo "running pid=$(cat "$pidfile") brokers=127.0.0.1:$port data=$data"
  else echo "stopped"; return 3; fi
}

topics() {
  KAFKA_BROKERS="${KAFKA_BROKERS:-127.0.0.1:$port}" node -r @swc-node/register "$root/tools/ops/src/create-topics.ts"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  topics) topics ;;
  reset) stop; rm -rf "$data"; log "data removed" ;;
  *) echo "usage: $0 start|stop|status|topics|reset" >&2; exit 2 ;;
esac
