#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL 15 cluster: initdb in a temp dir
# (as the postgres user when run as root, since initdb refuses root), a free
# loopback port, CAIRN_TEST_POSTGRES_URL exported, and the cluster stopped and
# removed when the command ends. If CAIRN_TEST_POSTGRES_URL is already set it
# is used as is.
set -euo pipefail

if [ -n "${CAIRN_TEST_POSTGRES_URL:-}" ]; then
  exec "$@"
fi

pgbin=""
for d in /usr/lib/postgresql/*/bin; do
  [ -x "$d/initdb" ] && pgbin="$d"
done
if [ -z "$pgbin" ]; then
  if [ -n "${CAIRN_REQUIRE_ALL:-}" ]; then
    echo "with-postgres: initdb not found; install postgresql (apt-get install postgresql)" >&2
    exit 1
  fi
  echo "with-postgres: PostgreSQL not installed; Postgres-backed tests will skip" >&2
  exec "$@"
fi

tmp=$(mktemp -d /tmp/cairn-pg.XXXXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo $((20000 + RANDOM % 20000)))
as_pg=()
if [ "$(id -u)" = 0 ]; then
  chown postgres "$tmp"
  as_pg=(runuser -u postgres --)
fi

cleanup() {
  "${as_pg[@]}" "$pgbin/pg_ctl" -D "$tmp/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

"${as_pg[@]}" "$pgbin/initdb" -D "$tmp/data" -U cairn --auth=trust -E UTF8 >"$tmp/initdb.log" 2>&1 || { cat "$tmp/initdb.log" >&2; exit 1; }
"${as_pg[@]}" "$pgbin/pg_ctl" -D "$tmp/data" -l "$tmp/pg.log" -w -t 60 \
  -o "-c listen_addresses=127.0.0.1 -p $port -k $tmp -c fsync=off -c max_connections=200" start >/dev/null \
  || { cat "$tmp/pg.log" >&2; exit 1; }

export CAIRN_TEST_POSTGRES_URL="postgres://cairn@127.0.0.1:$port/postgres?sslmode=disable"
echo "with-postgres: PostgreSQL on 127.0.0.1:$port" >&2
# Run the command in the background so an interrupt reaches the traps at
# once: they stop the command, then the EXIT trap removes the cluster.
"$@" <&0 &
child=$!
trap 'kill -TERM "$child" 2>/dev/null; wait "$child" || true; exit 130' INT
trap 'kill -TERM "$child" 2>/dev/null; wait "$child" || true; exit 143' TERM
wait "$child"
