#!/usr/bin/env bash
# `make run`: the Temporal dev server with its UI and the Cairn server (API,
# worker, local example cluster) on this machine; Ctrl-C stops both.
set -euo pipefail
cd "$(dirname "$0")/.."
export CAIRN_DATA_DIR=${CAIRN_DATA_DIR:-$PWD/.data}
exec ./bin/cairn dev --temporal ./bin/temporal "$@"
