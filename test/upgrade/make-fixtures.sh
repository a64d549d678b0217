#!/usr/bin/env bash
# Makes test/upgrade/fixtures/ from the previous release's own code: release 0.1.0 is commit 83ac976
# (CHANGELOG.md). In a temporary git worktree of that commit, its `vitals serve` runs on SQLite and
# then on PostgreSQL; test/upgrade/populate.ts fills each through the API with every kind of object
# and records that release's answers. Kept: the SQLite file (its `vitals backup`), a plain-SQL
# pg_dump (INSERTs, no owners or grants), and the answers. Run it again only to remake them.
# Needs VITALS_TEST_POSTGRES_URL (a server where it may create a database) and pg_dump.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PWD/node_modules/.bin:$PATH"
RELEASE=0.1.0
COMMIT=83ac976
OUT=test/upgrade/fixtures
: "${VITALS_TEST_POSTGRES_URL:?set VITALS_TEST_POSTGRES_URL}"
KEY=vk_upgradefixture000000000000000001
work=$(mktemp -d)
old="$work/vitals-$RELEASE"
db="vitals_fixture_$RANDOM"
base="${VITALS_TEST_POSTGRES_URL%/*}"
server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null || true
  psql "$VITALS_TEST_POSTGRES_URL" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  git worktree remove --force "$old" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
git worktree add --detach "$old" "$COMMIT" >/dev/null
ln -s "$PWD/node_modules" "$old/node_modules"
mkdir -p "$OUT"

# Starts the release's server with the environment given, waits until it serves, fills it, stops it.
fill() {
  local manifest=$1 log="$work/serve.log"
  shift
  env "$@" HOST=127.0.0.1 PORT=0 VITALS_API_KEY="$KEY" VITALS_RATE_LIMIT=off VITALS_LOG_LEVEL=info \
    node "$old/src/cli.ts" serve >"$log" 2>&1 &
  server=$!
  local port=
  for _ in $(seq 1 100); do
    port=$(grep -o '"msg":"Server listening at http://127.0.0.1:[0-9]*' "$log" | grep -o '[0-9]*$' || true)
    [ -n "$port" ] && grep -q '"msg":"vitals started"' "$log" && break
    sleep 0.2
  done
  [ -n "$port" ] || {
    cat "$log" >&2
    exit 1
  }
  VITALS="http://127.0.0.1:$port" KEY="$KEY" node test/upgrade/populate.ts "$manifest"
  kill -TERM "$server"
  wait "$server" || true
  server=
}

data="$work/data"
fill "$OUT/$RELEASE.sqlite.json" VITALS_DATA_DIR="$data"
rm -f "$OUT/$RELEASE.sqlite"
VITALS_DATA_DIR="$data" node "$old/src/cli.ts" backup "$OUT/$RELEASE.sqlite"

psql "$VITALS_TEST_POSTGRES_URL" -qc "CREATE DATABASE $db" >/dev/null
fill "$OUT/$RELEASE.postgres.json" DATABASE_URL="$base/$db" VITALS_DATA_DIR="$data-pg"
# INSERTs rather than COPY, and without psql's meta-commands, so any driver can load it.
pg_dump --no-owner --no-privileges --inserts "$base/$db" | grep -v '^\\' >"$OUT/$RELEASE.postgres.sql"
ls -l "$OUT"
