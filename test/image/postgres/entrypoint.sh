#!/usr/bin/env bash
# The entrypoint of localhost/postgres:17 (test/image/base.sh), doing what the official postgres
# image's does for compose.yaml: on an empty PGDATA, initdb with POSTGRES_USER (default postgres)
# and POSTGRES_PASSWORD, password (scram-sha-256) authentication from other hosts, and the database
# POSTGRES_DB (default: the user's name); then PostgreSQL in the foreground, listening everywhere.
set -euo pipefail
if [ "${1:-}" != postgres ]; then exec "$@"; fi
: "${POSTGRES_USER:=postgres}" "${POSTGRES_DB:=$POSTGRES_USER}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ -z "${POSTGRES_PASSWORD:-}" ]; then
    echo "POSTGRES_PASSWORD must be set to initialize the database" >&2
    exit 1
  fi
  initdb --username="$POSTGRES_USER" --pwfile=<(printf '%s\n' "$POSTGRES_PASSWORD") \
    --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  # Where Debian's client tools look (this server's own default is /tmp).
  echo "unix_socket_directories = '/var/run/postgresql'" >>"$PGDATA/postgresql.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
  if [ "$POSTGRES_DB" != postgres ]; then
    psql -v ON_ERROR_STOP=1 --username="$POSTGRES_USER" --dbname=postgres -qc "CREATE DATABASE \"$POSTGRES_DB\""
  fi
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  echo "PostgreSQL init process complete; ready for start up."
fi
exec postgres -c listen_addresses='*' "${@:2}"
