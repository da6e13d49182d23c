#!/usr/bin/env bash
# Temporal's production topology on one machine, without containers: the
# server built from the Go module proxy at the dev server's version, its
# schema set up on PostgreSQL with Temporal's own SQL tool, and frontend,
# two history hosts, matching and worker as separate processes on
# loopback, each with a config of its own and the dynamic config of
# deploy/temporal-dynamic-config.yaml (the file docker-compose.yml mounts).
#
#   temporal-cluster.sh up          build, set up, start every host, register
#                                   the default namespace; stop all on Ctrl-C
#   temporal-cluster.sh build       build the server and SQL tool into $BIN
#   temporal-cluster.sh setup       create the databases and schema, write the
#                                   hosts' configs under $TEMPORAL_CLUSTER_DIR
#   temporal-cluster.sh run HOST    run one host in the foreground (exec)
#   temporal-cluster.sh namespace   register the default namespace and Cairn's
#                                   search attributes (retried)
#   temporal-cluster.sh describe    print the topology as KEY=VALUE lines
#
# Settings (environment):
#   TEMPORAL_CLUSTER_DB_URL  PostgreSQL as postgres://USER[:PASSWORD]@HOST:PORT/DB
#                            (an account that may create databases); falls
#                            back to CAIRN_TEST_POSTGRES_URL. `make cluster`
#                            gives one from scripts/with-postgres.sh.
#   TEMPORAL_CLUSTER_DB      name of the main database (default temporal);
#                            visibility is ${TEMPORAL_CLUSTER_DB}_visibility
#   TEMPORAL_CLUSTER_PORT    the frontend's gRPC port (default 7233); the
#                            other hosts' ports follow it (see `describe`),
#                            all below 32768 (Temporal stores them as smallint)
#   TEMPORAL_CLUSTER_DIR     configs and logs (default .data/temporal-cluster)
#   BIN                      where the binaries go (default ./bin)
#   TEMPORAL_CLI             the Temporal CLI, for the namespace (default $BIN/temporal)
#   TEMPORAL_CLUSTER_UI_PORT where `up` serves the Temporal UI (default 8233;
#                            0: no UI)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
TEMPORAL_SERVER_VERSION=v1.29.1
# The UI the dev server embeds (the Temporal CLI v1.5.1 has ui-server
# v2.42.1) and docker-compose.yml runs (temporalio/ui:2.42.1).
UI_SERVER_VERSION=v2.42.1
# Shards of history: a workflow lives on one, and each history host owns
# some of them; the same number in docker-compose.yml (NUM_HISTORY_SHARDS).
# It cannot change once the database is set up.
NUM_HISTORY_SHARDS=4
# Every host: name, service, offset of its gRPC and membership ports from
# TEMPORAL_CLUSTER_PORT. The frontend's HTTP port is offset 2.
HOSTS=(frontend:frontend:0:1 history-1:history:3:4 history-2:history:5:6 matching:matching:7:8 worker:worker:9:10)
DYNAMIC_CONFIG=deploy/temporal-dynamic-config.yaml
# Cairn's search attributes (internal/searchattr; a test compares), which
# `cairn server` registers too: here they are ready before it starts.
SEARCH_ATTRIBUTES=(CairnKind:Keyword CairnStack:Keyword CairnCluster:Keyword CairnGraphType:Keyword
  CairnRetryOf:Keyword CairnApproval:Keyword CairnAwaiting:Keyword CairnDrift:Bool)

BIN=${BIN:-$root/bin}
dir=${TEMPORAL_CLUSTER_DIR:-$root/.data/temporal-cluster}
port=${TEMPORAL_CLUSTER_PORT:-7233}
[ "$port" -gt 0 ] && [ "$port" -le $((32767 - 10)) ] || { echo "temporal-cluster: TEMPORAL_CLUSTER_PORT $port: the hosts' ports must stay below 32768" >&2; exit 1; }
db=${TEMPORAL_CLUSTER_DB:-temporal}
server_bin=$BIN/temporal-server
sql_bin=$BIN/temporal-sql-tool
ui_bin=$BIN/temporal-ui-server
ui_port=${TEMPORAL_CLUSTER_UI_PORT:-8233}

die() { echo "temporal-cluster: $*" >&2; exit 1; }

# build installs the server and the SQL tool from the Go module proxy,
# unless both are already in $BIN.
build() {
  [ -x "$server_bin" ] && [ -x "$sql_bin" ] && return 0
  local gobin
  gobin=$(mktemp -d)
  echo "temporal-cluster: building Temporal server $TEMPORAL_SERVER_VERSION" >&2
  GOBIN=$gobin GOFLAGS=-mod=mod "${GO:-go}" install \
    "go.temporal.io/server/cmd/server@$TEMPORAL_SERVER_VERSION" \
    "go.temporal.io/server/cmd/tools/sql@$TEMPORAL_SERVER_VERSION"
  mkdir -p "$BIN"
  mv "$gobin/server" "$server_bin"
  mv "$gobin/sql" "$sql_bin"
  rm -rf "$gobin"
}

# build_ui installs the Temporal UI server (its web assets embedded) from
# the Go module proxy, unless it is already in $BIN.
build_ui() {
  [ -x "$ui_bin" ] && return 0
  local gobin
  gobin=$(mktemp -d)
  echo "temporal-cluster: building Temporal UI $UI_SERVER_VERSION" >&2
  GOBIN=$gobin GOFLAGS=-mod=mod "${GO:-go}" install "github.com/temporalio/ui-server/v2/cmd/server@$UI_SERVER_VERSION"
  mkdir -p "$BIN"
  mv "$gobin/server" "$ui_bin"
  rm -rf "$gobin"
}

# ui_config writes the UI's config: the frontend, loopback, the port.
ui_config() {
  mkdir -p "$dir/ui"
  cat >"$dir/ui/base.yaml" <<EOF
temporalGrpcAddress: 127.0.0.1:$port
host: 127.0.0.1
port: $ui_port
enableUi: true
defaultNamespace: default
cors:
  allowOrigins:
    - http://127.0.0.1:$ui_port
    - http://localhost:$ui_port
EOF
}

# parse_db splits TEMPORAL_CLUSTER_DB_URL into db_user, db_password,
# db_host, db_port.
parse_db() {
  local url=${TEMPORAL_CLUSTER_DB_URL:-${CAIRN_TEST_POSTGRES_URL:-}}
  [ -n "$url" ] || die "set TEMPORAL_CLUSTER_DB_URL (or run through scripts/with-postgres.sh)"
  local re='^postgres(ql)?://([^:@/]+)(:([^@/]*))?@([^:/?]+)(:([0-9]+))?'
  [[ $url =~ $re ]] || die "TEMPORAL_CLUSTER_DB_URL is not postgres://USER[:PASSWORD]@HOST[:PORT]/...: $url"
  db_user=${BASH_REMATCH[2]}
  db_password=${BASH_REMATCH[4]}
  db_host=${BASH_REMATCH[5]}
  db_port=${BASH_REMATCH[7]:-5432}
}

sql_tool() {
  echo "+ temporal-sql-tool $*" >>"$dir/logs/schema.log"
  "$sql_bin" --quiet --plugin postgres12 --endpoint "$db_host" --port "$db_port" \
    --user "$db_user" --password "$db_password" "$@" >>"$dir/logs/schema.log" 2>&1
}

# schema creates both databases (if absent) and brings their schema to
# the version this server expects, with the schema files the tool embeds.
schema() {
  local name schema_name
  mkdir -p "$dir/logs"
  : >"$dir/logs/schema.log"
  for pair in "$db:temporal" "${db}_visibility:visibility"; do
    name=${pair%%:*}
    schema_name=postgresql/v12/${pair#*:}
    # Fails when the database exists, which is fine: the steps after it
    # leave a database at the current version as it is.
    sql_tool --db "$name" create-database || true
    sql_tool --db "$name" setup-schema -v 0.0 || die "versioning of database $name failed (see $dir/logs/schema.log)"
    sql_tool --db "$name" update-schema --schema-name "$schema_name" \
      || die "schema of database $name failed (see $dir/logs/schema.log)"
  done
}

# configs writes base.yaml (persistence, membership, the dynamic config,
# every service) and one HOST.yaml per host (its own ports). Each host
# opens up to 12 connections to PostgreSQL, 60 in all.
configs() {
  # The configs hold the database's password.
  mkdir -p "$dir/config" "$dir/logs"
  chmod 700 "$dir/config"
  cat >"$dir/config/base.yaml" <<EOF
log:
  stdout: true
  level: warn
persistence:
  numHistoryShards: $NUM_HISTORY_SHARDS
  defaultStore: default
  visibilityStore: visibility
  datastores:
    default:
      sql:
        pluginName: postgres12
        databaseName: "$db"
        connectAddr: "$db_host:$db_port"
        connectProtocol: tcp
        user: "$db_user"
        password: "$db_password"
        maxConns: 10
        maxIdleConns: 10
        maxConnLifetime: 1h
    visibility:
      sql:
        pluginName: postgres12
        databaseName: "${db}_visibility"
        connectAddr: "$db_host:$db_port"
        connectProtocol: tcp
        user: "$db_user"
        password: "$db_password"
        maxConns: 2
        maxIdleConns: 2
        maxConnLifetime: 1h
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: 127.0.0.1:$port
      httpAddress: 127.0.0.1:$((port + 2))
dcRedirectionPolicy:
  policy: noop
dynamicConfigClient:
  filepath: "$root/$DYNAMIC_CONFIG"
  pollInterval: 10s
EOF
  # Each process tracks every service through membership, so every
  # config lists them all (a history host's ports stand for the service);
  # HOST.yaml then gives the host's own ports.
  echo "services:" >>"$dir/config/base.yaml"
  local h name service grpc membership seen=" "
  for h in "${HOSTS[@]}"; do
    IFS=: read -r name service grpc membership <<<"$h"
    service_config "$service" "$grpc" "$membership" >"$dir/config/$name.yaml"
    case $seen in *" $service "*) continue ;; esac
    seen="$seen$service "
    service_config "$service" "$grpc" "$membership" | sed 1d >>"$dir/config/base.yaml"
  done
}

# service_config prints a services: section with one service's ports.
service_config() {
  echo "services:"
  echo "  $1:"
  echo "    rpc:"
  echo "      grpcPort: $((port + $2))"
  echo "      membershipPort: $((port + $3))"
  echo "      bindOnIP: 127.0.0.1"
  [ "$1" != frontend ] || echo "      httpPort: $((port + 2))"
}

# run execs one host: its service, base.yaml and HOST.yaml.
run() {
  local want=$1 h name service rest
  for h in "${HOSTS[@]}"; do
    IFS=: read -r name service rest <<<"$h"
    if [ "$name" = "$want" ]; then
      exec "$server_bin" --root "$dir" --config config --env "$name" --allow-no-auth start --service "$service"
    fi
  done
  die "no host $want (hosts: ${HOSTS[*]%%:*})"
}

# namespace registers "default" (one day of retention) and Cairn's search
# attributes through the frontend with the Temporal CLI, trying again
# while the cluster starts, and returns once the frontend accepts a query
# on them (its namespace cache refreshes every
# system.namespaceCacheRefreshInterval) and history serves.
namespace() {
  local cli=${TEMPORAL_CLI:-$BIN/temporal} i sa
  local at=(--address "127.0.0.1:$port" -n default)
  [ -x "$cli" ] || die "the Temporal CLI $cli is missing (make bin/temporal)"
  for i in $(seq 1 120); do
    "$cli" operator namespace describe "${at[@]}" >/dev/null 2>&1 && break
    "$cli" operator namespace create "${at[@]}" --retention 24h >/dev/null 2>&1 || sleep 0.5
  done
  "$cli" operator namespace describe "${at[@]}" >/dev/null 2>&1 || die "namespace default not registered within a minute"
  for sa in "${SEARCH_ATTRIBUTES[@]}"; do
    for i in $(seq 1 20); do
      "$cli" operator search-attribute create "${at[@]}" --name "${sa%%:*}" --type "${sa#*:}" >/dev/null 2>&1 && break
      case " $("$cli" operator search-attribute list "${at[@]}" 2>/dev/null | tr -s '[:space:]' ' ') " in
        *" ${sa%%:*} "*) break ;;
      esac
      sleep 0.5
    done
  done
  for i in $(seq 1 120); do
    "$cli" workflow list "${at[@]}" --limit 1 --query "${SEARCH_ATTRIBUTES[0]%%:*} = 'ready'" >/dev/null 2>&1 && break
    sleep 0.5
  done
  "$cli" workflow list "${at[@]}" --limit 1 --query "${SEARCH_ATTRIBUTES[0]%%:*} = 'ready'" >/dev/null 2>&1 ||
    die "search attributes not usable within a minute"
  # History answers once its hosts joined the ring (after
  # history.startupMembershipJoinDelay): a workflow that does not exist is
  # then "not found" rather than unavailable.
  local out
  for i in $(seq 1 120); do
    out=$("$cli" workflow describe "${at[@]}" -w temporal-cluster-ready 2>&1 || true)
    case $out in *"not found"*) return 0 ;; esac
    sleep 0.5
  done
  die "history not serving within a minute"
}

# wait_port waits until something listens on 127.0.0.1:$1, while process
# $2 lives.
wait_port() {
  local i
  for i in $(seq 1 600); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    kill -0 "$2" 2>/dev/null || die "a host exited at start (logs in $dir/logs)"
    sleep 0.1
  done
  die "nothing listens on 127.0.0.1:$1 after a minute"
}

describe() {
  echo "version=$TEMPORAL_SERVER_VERSION"
  echo "ui_version=$UI_SERVER_VERSION"
  echo "shards=$NUM_HISTORY_SHARDS"
  echo "dynamic_config=$DYNAMIC_CONFIG"
  echo "search_attributes=$(IFS=,; echo "${SEARCH_ATTRIBUTES[*]}")"
  local h name service grpc membership
  for h in "${HOSTS[@]}"; do
    IFS=: read -r name service grpc membership <<<"$h"
    echo "host=$name service=$service grpc=127.0.0.1:$((port + grpc)) membership=127.0.0.1:$((port + membership))"
  done
}

up() {
  local start=$SECONDS pids=() h name
  parse_db
  build
  [ "$ui_port" = 0 ] || build_ui
  schema
  configs
  # Whatever ends the script (Ctrl-C, a host that exits, a failed start)
  # stops the hosts it started.
  stop_hosts() {
    [ "${#pids[@]}" -eq 0 ] || kill "${pids[@]}" 2>/dev/null || true
    wait || true
  }
  trap stop_hosts EXIT
  trap 'exit 0' INT TERM
  # The first host to start writes the cluster's metadata; the others,
  # started at once, would race it on a new database. So the frontend
  # starts first, and the others once it listens.
  for h in "${HOSTS[@]}"; do
    name=${h%%:*}
    "$0" run "$name" >"$dir/logs/$name.log" 2>&1 &
    pids+=($!)
    [ "$name" = frontend ] && wait_port "$port" "${pids[0]}"
  done
  namespace
  if [ "$ui_port" != 0 ]; then
    ui_config
    "$ui_bin" --root "$dir" --config ui --env base start >"$dir/logs/ui.log" 2>&1 &
    pids+=($!)
    echo "temporal-cluster: Temporal UI on http://127.0.0.1:$ui_port" >&2
  fi
  echo "temporal-cluster: up in $((SECONDS - start)) s; frontend 127.0.0.1:$port, logs in $dir/logs" >&2
  describe >&2
  wait -n "${pids[@]}" || true
  echo "temporal-cluster: a host exited; stopping the others" >&2
  exit 1
}

case ${1:-} in
  up) up ;;
  build) build ;;
  setup) parse_db; build; schema; configs ;;
  run) [ -n "${2:-}" ] || die "run HOST"; run "$2" ;;
  namespace) namespace ;;
  describe) describe ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
