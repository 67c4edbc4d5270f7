#!/usr/bin/env bash
# Starts a throw-away MariaDB for the database tests on 127.0.0.1:13306 and
# prints the DSN as an export line on stdout (logs go to stderr):
#
#   eval "$(scripts/ci/mariadb.sh)"
#
# Idempotent: a second run reuses the data directory and the running server.
set -euo pipefail

CACHE="${OKM_CACHE:-$HOME/.cache/openkeel-magnum}"
DIR="$CACHE/mariadb"
DATA="$DIR/data"
SOCK="$DIR/mysqld.sock"
PORT=13306
USER_NAME=openkeel
USER_PASS=openkeel-test
DB_NAME=openkeel_test

log() { echo "mariadb.sh: $*" >&2; }

if ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ]; then
	log "installing mariadb-server from apt"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq mariadb-server mariadb-client >&2
fi
MARIADBD="$(command -v mariadbd || echo /usr/sbin/mariadbd)"
INSTALL_DB="$(command -v mariadb-install-db || command -v mysql_install_db)"
CLIENT="$(command -v mariadb || command -v mysql)"

mkdir -p "$DIR"
RUN_AS=()
if [ "$(id -u)" = 0 ]; then
	# mariadbd refuses to run as root unless told to; the data directory
	# lives in root's cache, which other accounts may not be able to reach.
	RUN_AS=(--user=root)
fi

ping() { "$CLIENT" --protocol=socket -S "$SOCK" -uroot -e 'SELECT 1' >/dev/null 2>&1; }

if ! ping; then
	if [ ! -f "$DATA/mysql/db.frm" ] && [ ! -f "$DATA/mysql/global_priv.frm" ]; then
		rm -rf "$DATA"
		log "initialising $DATA"
		"$INSTALL_DB" --no-defaults "${RUN_AS[@]}" --datadir="$DATA" --auth-root-authentication-method=socket \
			--skip-test-db >&2
	fi
	log "starting mariadbd on 127.0.0.1:$PORT"
	nohup "$MARIADBD" --no-defaults "${RUN_AS[@]}" --datadir="$DATA" --socket="$SOCK" \
		--pid-file="$DIR/mysqld.pid" --bind-address=127.0.0.1 --port="$PORT" \
		--character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci \
		--innodb-buffer-pool-size=64M --innodb-flush-log-at-trx-commit=2 \
		--innodb-lock-wait-timeout=10 --max-connections=300 \
		--log-error="$DIR/error.log" >/dev/null 2>&1 &
	pid=$!
	for _ in $(seq 1 120); do
		ping && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.5
	done
	ping || { log "mariadbd did not start; see $DIR/error.log"; tail -20 "$DIR/error.log" >&2; exit 1; }
fi

# The test user may create and drop its own databases (one per test).
"$CLIENT" --protocol=socket -S "$SOCK" -uroot <<SQL
CREATE USER IF NOT EXISTS '$USER_NAME'@'127.0.0.1' IDENTIFIED BY '$USER_PASS';
CREATE USER IF NOT EXISTS '$USER_NAME'@'localhost' IDENTIFIED BY '$USER_PASS';
GRANT ALL PRIVILEGES ON *.* TO '$USER_NAME'@'127.0.0.1';
GRANT ALL PRIVILEGES ON *.* TO '$USER_NAME'@'localhost';
CREATE DATABASE IF NOT EXISTS \`$DB_NAME\` DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci;
FLUSH PRIVILEGES;
SQL
log "ready"
echo "export OPENKEEL_TEST_MYSQL_DSN='$USER_NAME:$USER_PASS@tcp(127.0.0.1:$PORT)/$DB_NAME?parseTime=true&loc=UTC'"
# The same server as a SQLAlchemy/sqlx URL, for the Rust tests.
echo "export OKM_TEST_MYSQL_URL='mysql://$USER_NAME:$USER_PASS@127.0.0.1:$PORT/$DB_NAME'"
