#!/usr/bin/env bash
# `make run`: the Temporal dev server with its UI and the Cairn server (API +
# worker + local example cluster) on this machine, both stopped on Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."

DATA=${CAIRN_DATA_DIR:-$PWD/.data}
TEMPORAL_PORT=${TEMPORAL_PORT:-7233}
TEMPORAL_UI_PORT=${TEMPORAL_UI_PORT:-8233}
API_ADDR=${CAIRN_API_ADDR:-127.0.0.1:8080}
mkdir -p "$DATA"

pids=()
stop() {
  trap - INT TERM EXIT
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap stop INT TERM EXIT

attrs=()
for a in CairnKind CairnStack CairnCluster CairnGraphType CairnRetryOf; do
  attrs+=(--search-attribute "$a=Keyword")
done

./bin/temporal server start-dev \
  --ip 127.0.0.1 --port "$TEMPORAL_PORT" --ui-port "$TEMPORAL_UI_PORT" \
  --db-filename "$DATA/temporal.db" --log-level warn "${attrs[@]}" \
  >"$DATA/temporal.log" 2>&1 &
pids+=($!)

for _ in $(seq 1 120); do
  if (exec 3<>/dev/tcp/127.0.0.1/"$TEMPORAL_PORT") 2>/dev/null; then break; fi
  sleep 0.5
done

export CAIRN_TEMPORAL_ADDRESS=127.0.0.1:$TEMPORAL_PORT
export CAIRN_API_ADDR=$API_ADDR
export CAIRN_DATA_DIR=$DATA
export CAIRN_TEMPORAL_UI_URL=${CAIRN_TEMPORAL_UI_URL:-http://127.0.0.1:$TEMPORAL_UI_PORT}
./bin/cairn server --example-cluster &
pids+=($!)

cat <<MSG

  Temporal UI   http://127.0.0.1:$TEMPORAL_UI_PORT
  Cairn API     http://$API_ADDR   (OpenAPI: http://$API_ADDR/openapi.yaml)
  Data          $DATA

  Try:  ./bin/cairn apply --stack demo examples/hello/package.yaml
  Stop: Ctrl-C

MSG
wait -n "${pids[@]}"
