#!/usr/bin/env bash
# Starts a throw-away RabbitMQ for the notification tests on 127.0.0.1:25683
# and prints its URL as an export line on stdout (logs go to stderr):
#
#   eval "$(scripts/ci/rabbitmq.sh)"
#
# - state:  ${OKM_CACHE:-$HOME/.cache/openkeel-magnum}/rabbitmq/{mnesia,log,...}
# - node:   okm-test@localhost, AMQP on 127.0.0.1:25683, Erlang distribution
#           on 127.0.0.1:25684, its own epmd on 127.0.0.1:25685; no plugins
#           (no management listener)
# - user:   openkeel / openkeel-test, administrator of the vhost `openkeel`
# - ctl:    .../rabbitmq/rabbitmqctl runs rabbitmqctl against this node (the
#           reconnect test restarts the broker with `stop_app`/`start_app`)
#
# The ports stay clear of a system RabbitMQ (5672, 15672, 4369, and 25672,
# the distribution port of a broker on 5672) that `apt-get install` starts
# where systemd runs, clear of the reference Magnum's broker that
# bench/run.sh starts (5673, 4371, and its distribution port 25673), and
# below the kernel's ephemeral range (32768-60999):
# a port in it can be taken by an outgoing connection (the CLI's own, to
# epmd) just when the broker listens again after a restart.
#
# Idempotent: a second run reuses the state directory and a node that is
# already running (starting its application if it is stopped). Stop it with:
#   .../rabbitmq/rabbitmqctl stop
set -euo pipefail

CACHE="${OKM_CACHE:-$HOME/.cache/openkeel-magnum}"
STATE="$CACHE/rabbitmq"
HOST=127.0.0.1
PORT=25683
DIST_PORT=25684
EPMD_PORT=25685
NODE=okm-test@localhost
USER_NAME=openkeel
USER_PASS=openkeel-test
VHOST=openkeel
RMQ_BIN=/usr/lib/rabbitmq/bin

log() { echo "rabbitmq.sh: $*" >&2; }

if [ ! -x "$RMQ_BIN/rabbitmq-server" ]; then
	log "installing rabbitmq-server from apt"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq --no-install-recommends rabbitmq-server >&2
fi

mkdir -p "$STATE/mnesia" "$STATE/log"

# Everything the node and rabbitmqctl read comes from here, never from
# /etc/rabbitmq or /var/lib/rabbitmq (HOME holds the Erlang cookie).
cat >"$STATE/env.sh" <<ENV
export HOME='$STATE'
export RABBITMQ_NODENAME='$NODE'
export RABBITMQ_USE_LONGNAME=false
export RABBITMQ_NODE_IP_ADDRESS='$HOST'
export RABBITMQ_NODE_PORT='$PORT'
export RABBITMQ_DIST_PORT='$DIST_PORT'
export ERL_EPMD_PORT='$EPMD_PORT'
export ERL_EPMD_ADDRESS='$HOST'
export RABBITMQ_MNESIA_BASE='$STATE/mnesia'
export RABBITMQ_LOG_BASE='$STATE/log'
export RABBITMQ_PID_FILE='$STATE/rabbitmq.pid'
export RABBITMQ_CONFIG_FILE='$STATE/rabbitmq.conf'
export RABBITMQ_ADVANCED_CONFIG_FILE='$STATE/advanced.config'
export RABBITMQ_CONF_ENV_FILE='$STATE/rabbitmq-env.conf'
export RABBITMQ_ENABLED_PLUGINS_FILE='$STATE/enabled_plugins'
export RABBITMQ_PLUGINS_EXPAND_DIR='$STATE/plugins-expand'
export RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS='-kernel inet_dist_use_interface {127,0,0,1}'
ENV
# shellcheck source=/dev/null
. "$STATE/env.sh"

cat >"$STATE/rabbitmq.conf" <<CONF
listeners.tcp.default = $HOST:$PORT
loopback_users = none
log.console = false
log.file.level = info
disk_free_limit.absolute = 50MB
CONF
echo '[].' >"$STATE/advanced.config"
echo '[].' >"$STATE/enabled_plugins"
: >"$STATE/rabbitmq-env.conf"

cat >"$STATE/rabbitmqctl" <<CTL
#!/usr/bin/env bash
# rabbitmqctl against the test node of scripts/ci/rabbitmq.sh.
. '$STATE/env.sh'
exec '$RMQ_BIN/rabbitmqctl' "\$@"
CTL
chmod +x "$STATE/rabbitmqctl"
CTL="$STATE/rabbitmqctl"

# The node answers ping even while its application is stopped.
running() { "$CTL" -q ping >/dev/null 2>&1; }

app_running() { [ "$("$CTL" -q eval 'rabbit:is_running().' 2>/dev/null)" = true ]; }

if ! running; then
	log "starting RabbitMQ node $NODE on $HOST:$PORT"
	# From the state directory: a crashing VM writes erl_crash.dump there.
	(cd "$STATE" && exec setsid nohup "$RMQ_BIN/rabbitmq-server") >"$STATE/log/startup.log" 2>&1 </dev/null &
	pid=$!
	for _ in $(seq 1 120); do
		running && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.5
	done
	running || {
		log "RabbitMQ did not start; see $STATE/log"
		tail -30 "$STATE/log/startup.log" >&2 || true
		exit 1
	}
elif ! app_running; then
	# stop_app (the reconnect test) leaves the node up, its application
	# stopped. (Never start_app on a node that is booting: it breaks.)
	log "starting the RabbitMQ application on $NODE"
	"$CTL" -q start_app >&2
fi
"$CTL" -q await_startup --timeout 60 >&2 || {
	log "RabbitMQ did not finish booting; see $STATE/log"
	exit 1
}
"$CTL" -q list_vhosts | grep -qx "$VHOST" || "$CTL" -q add_vhost "$VHOST" >&2
if "$CTL" -q list_users | awk '{print $1}' | grep -qx "$USER_NAME"; then
	"$CTL" -q change_password "$USER_NAME" "$USER_PASS" >&2
else
	"$CTL" -q add_user "$USER_NAME" "$USER_PASS" >&2
fi
"$CTL" -q set_user_tags "$USER_NAME" administrator >&2
"$CTL" -q set_permissions -p "$VHOST" "$USER_NAME" '.*' '.*' '.*' >&2
log "ready"
echo "export OKM_TEST_RABBITMQ_URL='amqp://$USER_NAME:$USER_PASS@$HOST:$PORT/$VHOST'"
echo "export OKM_TEST_RABBITMQ_CTL='$CTL'"
