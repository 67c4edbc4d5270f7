#!/usr/bin/env bash
# Starts a throw-away PostgreSQL for the database tests on 127.0.0.1:15432
# and prints the DSN as an export line on stdout (logs go to stderr):
#
#   eval "$(scripts/ci/postgres.sh)"
#
# Idempotent: a second run reuses the cluster and the running server.
set -euo pipefail

CACHE="${OKM_CACHE:-$HOME/.cache/openkeel-magnum}"
DIR="$CACHE/postgres"
DATA="$DIR/data"
PORT=15432
USER_NAME=openkeel
USER_PASS=openkeel-test
DB_NAME=openkeel_test

log() { echo "postgres.sh: $*" >&2; }

find_bin() {
	local name=$1
	if [ -x "/usr/local/bin/$name" ]; then echo "/usr/local/bin/$name"; return; fi
	local d
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
		if [ -x "$d/$name" ]; then echo "$d/$name"; return; fi
	done
	command -v "$name" || true
}

if [ -z "$(find_bin postgres)" ]; then
	log "installing postgresql from apt"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq postgresql postgresql-client >&2
fi
POSTGRES="$(find_bin postgres)"
INITDB="$(find_bin initdb)"
PG_CTL="$(find_bin pg_ctl)"
PSQL="$(find_bin psql)"

# PostgreSQL refuses to run as root: run it as the postgres account (or a
# dedicated one) when we are root.
RUN=()
if [ "$(id -u)" = 0 ]; then
	if ! id postgres >/dev/null 2>&1; then
		useradd --system --home-dir "$DIR" --shell /usr/sbin/nologin postgres >&2
	fi
	RUN=(runuser -u postgres --)
	mkdir -p "$DIR"
	chown postgres: "$DIR"
	# The cache may live under a root-only home directory.
	d="$DIR"
	while [ "$d" != / ]; do
		d="$(dirname "$d")"
		chmod o+x "$d" 2>/dev/null || true
	done
else
	mkdir -p "$DIR"
fi

ready() { "${RUN[@]}" "$PSQL" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -Atqc 'SELECT 1' >/dev/null 2>&1; }

if ! ready; then
	if [ ! -f "$DATA/PG_VERSION" ]; then
		log "initialising $DATA"
		"${RUN[@]}" "$INITDB" -D "$DATA" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >&2
	fi
	log "starting postgres on 127.0.0.1:$PORT"
	"${RUN[@]}" "$PG_CTL" -D "$DATA" -l "$DIR/server.log" -w -t 60 \
		-o "-c listen_addresses=127.0.0.1 -p $PORT -k $DIR -c max_connections=200 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c deadlock_timeout=200ms" \
		start >&2
	ready || { log "postgres did not start; see $DIR/server.log"; exit 1; }
fi

"${RUN[@]}" "$PSQL" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 -q >&2 <<SQL
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$USER_NAME') THEN
    CREATE ROLE $USER_NAME LOGIN CREATEDB PASSWORD '$USER_PASS';
  END IF;
END \$\$;
-- The tests drop their databases WITH (FORCE). PostgreSQL checks its right to
-- end every backend of the database, an autovacuum worker's included (whose
-- role is none), and only pg_signal_backend passes that check.
SET client_min_messages = warning;
GRANT pg_signal_backend TO $USER_NAME;
SQL
if ! "${RUN[@]}" "$PSQL" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -Atqc \
	"SELECT 1 FROM pg_database WHERE datname = '$DB_NAME'" | grep -q 1; then
	"${RUN[@]}" "$PSQL" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -qc "CREATE DATABASE $DB_NAME OWNER $USER_NAME" >&2
fi
log "ready"
echo "export OPENKEEL_TEST_POSTGRES_DSN='postgres://$USER_NAME:$USER_PASS@127.0.0.1:$PORT/$DB_NAME?sslmode=disable'"
# The same server as a SQLAlchemy/sqlx URL, for the Rust tests.
echo "export OKM_TEST_POSTGRES_URL='postgres://$USER_NAME:$USER_PASS@127.0.0.1:$PORT/$DB_NAME'"
