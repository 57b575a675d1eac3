#!/usr/bin/env bash
# Make sure a PostgreSQL server is reachable for the tests; install and start Debian's if needed.
# Prints the connection URL of a fresh database named by $1 (default bims_test) on stdout.
set -euo pipefail
db="${1:-bims_test}"
log() { echo "ensure-postgres: $*" >&2; }

ready() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }

if ! command -v pg_isready >/dev/null 2>&1; then
  log "installing PostgreSQL from Debian"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null) >&2
fi
if ! ready; then
  log "starting PostgreSQL"
  cluster_version=$(ls /etc/postgresql 2>/dev/null | sort -V | tail -1)
  if [ -z "$cluster_version" ]; then
    cluster_version=$(ls /usr/lib/postgresql | sort -V | tail -1)
    pg_createcluster "$cluster_version" main >&2
  fi
  pg_ctlcluster --skip-systemctl-redirect "$cluster_version" main start >&2 || true
  for _ in $(seq 1 30); do ready && break; sleep 1; done
  ready || { log "PostgreSQL did not become ready"; exit 1; }
fi

# Connect as the postgres superuser through the local socket (trust or peer auth as root).
psql_admin() {
  if psql -h 127.0.0.1 -U postgres -d postgres -tAc "select 1" >/dev/null 2>&1; then
    psql -h 127.0.0.1 -U postgres -d postgres -v ON_ERROR_STOP=1 -tAq "$@"
  else
    su postgres -c "psql -d postgres -v ON_ERROR_STOP=1 -tAq $(printf '%q ' "$@")"
  fi
}
psql_admin -c "select 1" >/dev/null
# Tests connect over TCP as postgres; make sure that works without a password (trust) or with one we set.
if ! psql -h 127.0.0.1 -U postgres -d postgres -tAc "select 1" >/dev/null 2>&1; then
  psql_admin -c "alter user postgres password 'postgres'" >/dev/null
  echo "postgres://postgres:postgres@127.0.0.1:5432/$db"
else
  echo "postgres://postgres@127.0.0.1:5432/$db"
fi
