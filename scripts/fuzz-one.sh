#!/usr/bin/env bash
# Runs one fuzz target for a duration: fuzz-one.sh PKG TARGET FUZZTIME.
# Go 1.26's fuzzing coordinator can report a bare "context deadline
# exceeded" at the end of a duration -fuzztime when a worker is still
# mid-input (go.dev/issue/75804, fixed in Go 1.27): no input fails and
# none is written. Such a run is tried once more; any other failure, or
# a second one, fails, and a real finding always leaves its input under
# the package's testdata/fuzz/.
set -uo pipefail
pkg=$1 name=$2 fuzztime=$3
for attempt in 1 2; do
  out=$(${GO:-go} test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg" 2>&1)
  rc=$?
  printf '%s\n' "$out"
  if [ $rc -eq 0 ]; then exit 0; fi
  if [ $attempt -eq 1 ] && grep -q 'context deadline exceeded' <<<"$out" \
     && ! grep -qE 'Failing input written to|panic:|seed corpus entry' <<<"$out"; then
    echo "fuzz $pkg $name: the coordinator's end-of-time race (no failing input); once more"
    continue
  fi
  exit $rc
done
