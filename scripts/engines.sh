#!/usr/bin/env bash
# Real Kafka (single-node KRaft) and a MongoDB-wire server (mongo-java-server, in memory) on loopback,
# without Docker; only Java 17 + Maven are needed. See /work/shared/ENGINES.md for the facts behind this.
#
#   scripts/engines.sh fetch    resolve the jars into .cache/engines/{kafka,mongo}-libs (skipped when present)
#   scripts/engines.sh start    fetch if needed, start both in the background, wait until ready,
#                               write .cache/engines/env (MONGO_URL, KAFKA_BROKERS); no-op if already up
#   scripts/engines.sh stop     stop both (or only those named: stop kafka | stop mongo)
#   scripts/engines.sh status   print what is running
#   scripts/engines.sh kill kafka|mongo     SIGKILL one engine at once (drills: a crash, not a stop)
#   scripts/engines.sh freeze|thaw kafka|mongo
#                               SIGSTOP / SIGCONT one engine (drills: a hung engine whose port stays open)
#   scripts/engines.sh lease PID / release PID
#                               for the jest hooks: lease = start on behalf of process PID; release drops
#                               that lease and stops the engines a lease started once no live lease is left
#                               (so parallel test runs share them, and a start by hand keeps them up)
#
# Ports: GW_KAFKA_PORT (19092), GW_KAFKA_CONTROLLER_PORT (19093), GW_MONGO_PORT (27018).
# GW_ENGINES_NAME: a second, separate pair of engines (its own run folder and env file: run-NAME, env-NAME),
# as the drills use, so killing their broker never touches the one the other tests share.
# GW_KAFKA_KEEP_DATA=1: a start reuses the broker's data folder left by the last run (a restart after a
# crash, as a real broker comes back on its disk); by default every start begins an empty cluster.
# Ready timeout in seconds: GW_ENGINES_TIMEOUT (90).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ENGINES="$ROOT/scripts/engines"
CACHE="$ROOT/.cache/engines"
NAME="${GW_ENGINES_NAME:-}"
[[ "$NAME" =~ ^[a-z0-9-]*$ ]] || { echo "engines: GW_ENGINES_NAME must be lowercase letters, digits, dashes" >&2; exit 2; }
RUN="$CACHE/run${NAME:+-$NAME}"
ENV_FILE="$CACHE/env${NAME:+-$NAME}"
KAFKA_LIBS="$CACHE/kafka-libs"
MONGO_LIBS="$CACHE/mongo-libs"
KAFKA_PORT="${GW_KAFKA_PORT:-19092}"
CONTROLLER_PORT="${GW_KAFKA_CONTROLLER_PORT:-19093}"
MONGO_PORT="${GW_MONGO_PORT:-27018}"
TIMEOUT="${GW_ENGINES_TIMEOUT:-90}"

die() { echo "engines: $*" >&2; exit 1; }
log() { echo "engines: $*" >&2; }

# True when something accepts TCP connections on 127.0.0.1:$1.
port_open() { timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }

# True when pid file $1 names a live process whose command line contains $2
# (guards against a stale pid file whose number was reused by another process).
alive() {
  local pid cmdline
  [[ -f "$1" ]] || return 1
  pid="$(cat "$1")"
  kill -0 "$pid" 2>/dev/null || return 1
  cmdline="$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline")" || return 1
  [[ "$cmdline" == *"$2"* ]]
}

# fetch_libs <pom dir> <target dir>: copy the POM's runtime jars into the target. A marker holding the
# POM's checksum makes it skip when done, and redo an interrupted fetch or one for an older POM.
fetch_libs() {
  local pom="$1/pom.xml" dir="$2" sum
  sum="$(cksum <"$pom")"
  if [[ -f "$dir/.fetched" && "$(cat "$dir/.fetched")" == "$sum" ]]; then return 0; fi
  command -v mvn >/dev/null || die "mvn not found (Maven 3 is required to fetch the engine jars)"
  log "fetching $(basename "$dir") with Maven..."
  rm -rf "$dir" && mkdir -p "$dir"
  if ! mvn -q -B -f "$pom" dependency:copy-dependencies -DincludeScope=runtime \
      -DoutputDirectory="$dir" >"$CACHE/fetch-$(basename "$dir").log" 2>&1; then
    tail -n 30 "$CACHE/fetch-$(basename "$dir").log" >&2
    die "Maven could not resolve $pom (log: $CACHE/fetch-$(basename "$dir").log)"
  fi
  echo "$sum" >"$dir/.fetched"
}

cmd_fetch() {
  mkdir -p "$CACHE"
  fetch_libs "$ENGINES/kafka" "$KAFKA_LIBS"
  fetch_libs "$ENGINES/mongo" "$MONGO_LIBS"
}

write_env() {
  cat >"$ENV_FILE" <<EOF
export MONGO_URL=mongodb://127.0.0.1:$MONGO_PORT/gateway
export KAFKA_BROKERS=127.0.0.1:$KAFKA_PORT
EOF
}

start_kafka() {
  local dir="$RUN/kafka"
  if [[ "${GW_KAFKA_KEEP_DATA:-0}" == 1 && -f "$dir/data/meta.properties" ]]; then
    log "kafka: restarting on the data of its last run"
  else
    rm -rf "$dir" && mkdir -p "$dir/data"   # fresh, empty cluster
  fi
  cat >"$dir/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$dir/data
num.partitions=3
auto.create.topics.enable=true
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
# Fewer offsets partitions than the default 50: the first consumer group comes up faster on 2 cores.
offsets.topic.num.partitions=5
EOF
  cat >"$dir/log4j.properties" <<'EOF'
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
log4j.logger.state.change.logger=WARN
EOF
  local jvm=(java -Xmx512m -cp "$KAFKA_LIBS/*" "-Dlog4j.configuration=file:$dir/log4j.properties")
  # Any valid base64 UUID will do: a log dir belongs to one cluster only (format skips a formatted one).
  "${jvm[@]}" kafka.tools.StorageTool format -t 'MkU3OEVBNTcwNTJENDM2Qg' -c "$dir/server.properties" \
    --ignore-formatted >"$RUN/kafka-format.log" 2>&1 || { cat "$RUN/kafka-format.log" >&2; die "Kafka storage format failed"; }
  # setsid + no inherited stdio or lock fd (9): the broker outlives this script, and holds neither a
  # caller's pipe nor the start/stop lock open.
  setsid "${jvm[@]}" kafka.Kafka "$dir/server.properties" </dev/null >"$RUN/kafka.log" 2>&1 9>&- &
  echo $! >"$RUN/kafka.pid"
}

start_mongo() {
  setsid java -cp "$MONGO_LIBS/*" \
    -Dorg.slf4j.simpleLogger.log.de.bwaldvogel.mongo.wire.MongoWireProtocolHandler=warn \
    "$ENGINES/mongo/MongoWireServer.java" "$MONGO_PORT" </dev/null >"$RUN/mongo.log" 2>&1 9>&- &
  echo $! >"$RUN/mongo.pid"
}

# running <pid file>: the engine this start launched is still there. No command-line check: until the
# background shell has exec'd java (late on a loaded machine) its command line is still bash's.
running() { [[ -f "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

# stop_one <name> <cmdline pattern>: SIGTERM, then SIGKILL if it is still there after 10 s.
stop_one() {
  local pidfile="$RUN/$1.pid" pid i
  if alive "$pidfile" "$2"; then
    pid="$(cat "$pidfile")"
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    if kill -0 "$pid" 2>/dev/null; then log "$1 did not stop on SIGTERM, killing"; kill -KILL "$pid" 2>/dev/null || true; fi
    log "stopped $1 (pid $pid)"
  fi
  rm -f "$pidfile" "$RUN/$1.leased"
}

# ensure <name> <cmdline pattern> <port>: returns 0 if ours is already up; otherwise clears a half-dead
# one, refuses a port held by someone else, and returns 1 so the caller starts it.
ensure() {
  if alive "$RUN/$1.pid" "$2" && port_open "$3"; then log "$1 already running (pid $(cat "$RUN/$1.pid"))"; return 0; fi
  stop_one "$1" "$2"
  if port_open "$3"; then
    die "port $3 for $1 is taken by another process; free it, choose other ports (GW_KAFKA_PORT, GW_KAFKA_CONTROLLER_PORT, GW_MONGO_PORT), or export MONGO_URL/KAFKA_BROKERS of engines already running elsewhere"
  fi
  return 1
}

# fail_start <kafka|mongo> <message>: show the failing engine's log, stop what this start launched
# (no half-started state; engines that were already running stay), exit.
fail_start() {
  echo "--- last lines of $RUN/$1.log" >&2
  tail -n 40 "$RUN/$1.log" >&2 || true
  if ((need_kafka)); then stop_one kafka kafka.Kafka; fi
  if ((need_mongo)); then stop_one mongo MongoWireServer; fi
  die "$2 (full log: $RUN/$1.log)"
}

# One start/stop/release at a time (several test runs may start together). Fd 9 holds the lock.
lock_run() { mkdir -p "$RUN/leases"; exec 9>"$RUN/lock" && flock 9; }

# cmd_start [lease PID]
cmd_start() {
  local lease="${2:-}"
  command -v java >/dev/null || die "java not found (Java 17+ is required)"
  cmd_fetch
  lock_run
  local t0=$SECONDS
  [[ $(printf '%s\n' "$KAFKA_PORT" "$CONTROLLER_PORT" "$MONGO_PORT" | sort -u | wc -l) == 3 ]] ||
    die "GW_KAFKA_PORT, GW_KAFKA_CONTROLLER_PORT and GW_MONGO_PORT must differ"
  # Check both before starting either, so a busy port leaves nothing half-started.
  local need_kafka=0 need_mongo=0
  ensure kafka kafka.Kafka "$KAFKA_PORT" || need_kafka=1
  ensure mongo MongoWireServer "$MONGO_PORT" || need_mongo=1
  if ((need_kafka)) && port_open "$CONTROLLER_PORT"; then die "Kafka controller port $CONTROLLER_PORT is taken (GW_KAFKA_CONTROLLER_PORT)"; fi
  if ((need_kafka)); then start_kafka; fi
  if ((need_mongo)); then start_mongo; fi

  if ((need_kafka || need_mongo)); then
    log "waiting up to ${TIMEOUT}s for Kafka on :$KAFKA_PORT and Mongo-wire on :$MONGO_PORT..."
    local kafka_ok=0 mongo_ok=0
    while ((SECONDS - t0 < TIMEOUT)); do
      running "$RUN/kafka.pid" || fail_start kafka "Kafka exited during start-up"
      running "$RUN/mongo.pid" || fail_start mongo "Mongo-wire server exited during start-up"
      # The port opens before the broker has finished starting; the log line marks the end of start-up.
      ((kafka_ok)) || { grep -q 'Kafka Server started' "$RUN/kafka.log" 2>/dev/null && port_open "$KAFKA_PORT" && kafka_ok=1; } || true
      ((mongo_ok)) || { port_open "$MONGO_PORT" && mongo_ok=1; } || true
      ((kafka_ok && mongo_ok)) && break
      sleep 0.5
    done
    ((kafka_ok)) || fail_start kafka "Kafka not ready after ${TIMEOUT}s"
    ((mongo_ok)) || fail_start mongo "Mongo-wire server not ready after ${TIMEOUT}s"
    log "ready in $((SECONDS - t0))s"
  fi
  if [[ -n "$lease" ]]; then
    touch "$RUN/leases/$lease"
    # Mark what this lease started: the last release stops exactly those.
    if ((need_kafka)); then touch "$RUN/kafka.leased"; fi
    if ((need_mongo)); then touch "$RUN/mongo.leased"; fi
  else
    rm -f "$RUN/kafka.leased" "$RUN/mongo.leased"   # started by hand: keep them up after the tests
  fi
  write_env
  log "env written to $ENV_FILE"
}

# The env file points at both engines: drop it once neither runs.
drop_env_if_idle() {
  if ! alive "$RUN/kafka.pid" kafka.Kafka && ! alive "$RUN/mongo.pid" MongoWireServer; then rm -f "$ENV_FILE"; fi
}

cmd_release() {
  local f
  lock_run
  rm -f "$RUN/leases/$1"
  for f in "$RUN/leases"/*; do
    [[ -e "$f" ]] || continue
    if kill -0 "$(basename "$f")" 2>/dev/null; then log "still leased by test run pid $(basename "$f"), leaving the engines up"; return 0; fi
    rm -f "$f"   # a test run that died without releasing
  done
  if [[ -f "$RUN/kafka.leased" ]]; then stop_one kafka kafka.Kafka; fi
  if [[ -f "$RUN/mongo.leased" ]]; then stop_one mongo MongoWireServer; fi
  drop_env_if_idle
}

# cmd_stop [kafka] [mongo]: stops the named engines, both by default.
cmd_stop() {
  lock_run
  local name names=("$@")
  ((${#names[@]})) || names=(kafka mongo)
  for name in "${names[@]}"; do
    case "$name" in
      kafka) stop_one kafka kafka.Kafka ;;
      mongo) stop_one mongo MongoWireServer ;;
      *) die "unknown engine '$name' (kafka|mongo)" ;;
    esac
  done
  drop_env_if_idle
}

# cmd_signal <KILL|STOP|CONT> <kafka|mongo>: a fault for the drills. KILL leaves the pid file: a later start
# sees the process gone and starts a new one (on its data with GW_KAFKA_KEEP_DATA=1).
cmd_signal() {
  local sig="$1" name="${2:-}" pattern
  case "$name" in
    kafka) pattern=kafka.Kafka ;;
    mongo) pattern=MongoWireServer ;;
    *) die "unknown engine '$name' (kafka|mongo)" ;;
  esac
  alive "$RUN/$name.pid" "$pattern" || die "$name is not running"
  local pid
  pid="$(cat "$RUN/$name.pid")"
  kill -"$sig" "$pid"
  if [[ "$sig" == KILL ]]; then
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  fi
  log "sent SIG$sig to $name (pid $pid)"
}

cmd_status() {
  local name pattern port
  for spec in "kafka kafka.Kafka $KAFKA_PORT" "mongo MongoWireServer $MONGO_PORT"; do
    read -r name pattern port <<<"$spec"
    if alive "$RUN/$name.pid" "$pattern"; then
      if port_open "$port"; then echo "$name: running (pid $(cat "$RUN/$name.pid"), 127.0.0.1:$port)"
      else echo "$name: process up (pid $(cat "$RUN/$name.pid")) but 127.0.0.1:$port not answering"; fi
    else
      echo "$name: not running"
    fi
  done
  [[ -f "$ENV_FILE" ]] && echo "env file: $ENV_FILE" || true
  local leases
  leases="$(ls "$RUN/leases" 2>/dev/null | tr '\n' ' ')" || true   # no run dir yet on a fresh clone
  [[ -z "$leases" ]] || echo "leased by test runs (pids): $leases"
}

case "${1:-}" in
  fetch) cmd_fetch ;;
  start) cmd_start ;;
  lease) [[ "${2:-}" =~ ^[0-9]+$ ]] || die "usage: $0 lease PID"; cmd_start lease "$2" ;;
  release) [[ "${2:-}" =~ ^[0-9]+$ ]] || die "usage: $0 release PID"; cmd_release "$2" ;;
  stop) shift; cmd_stop "$@" ;;
  status) cmd_status ;;
  kill) cmd_signal KILL "${2:-}" ;;
  freeze) cmd_signal STOP "${2:-}" ;;
  thaw) cmd_signal CONT "${2:-}" ;;
  *) echo "usage: $0 fetch|start|stop [kafka|mongo]|status|lease PID|release PID|kill|freeze|thaw kafka|mongo" >&2; exit 2 ;;
esac
