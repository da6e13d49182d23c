#!/usr/bin/env bash
# Takes docs/temporal-ui.png: a Temporal UI page (an execution's history) in
# headless Chromium (Debian's chromium package). Usage: screenshot.sh URL
set -euo pipefail
url=${1:?usage: screenshot.sh TEMPORAL_UI_WORKFLOW_URL}
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --window-size=1600,1000 --virtual-time-budget=15000 \
  --screenshot="$(dirname "$0")/../docs/temporal-ui.png" "$url"
