#!/bin/sh
# Restores an RDB snapshot (from backup.sh or BGSAVE) into a Redis data directory that is then
# served with appendonly yes. Run it beside the data volume while the regular Redis is stopped:
# see deploy/README.md for compose and Kubernetes.
#   sh restore.sh SNAPSHOT.rdb [DATA_DIR]      (DATA_DIR defaults to /data)
# A throw-away redis-server on 127.0.0.1:${REDIS_PORT:-6379} does the conversion.
set -eu

rdb=${1:?usage: restore.sh SNAPSHOT.rdb [DATA_DIR]}
dir=${2:-/data}
port=${REDIS_PORT:-6379}

cli() { redis-cli -h 127.0.0.1 -p "$port" "$@" </dev/null; }
field() { cli INFO persistence | tr -d '\r' | sed -n "s/^$1://p"; }
say() { echo "restore: $*" >&2; }

if [ ! -s "$rdb" ]; then
    say "$rdb is missing or empty"
    exit 1
fi
if cli PING >/dev/null 2>&1; then
    say "a Redis already answers on port $port: stop the regular Redis first"
    exit 1
fi

# With appendonly yes Redis loads only the AOF and ignores dump.rdb, so the old AOF must go and
# a new one must be written from the snapshot. Redis 7 keeps it in appendonlydir, 6 in one file.
rm -rf "$dir/appendonlydir" "$dir/appendonly.aof"
if [ ! "$rdb" -ef "$dir/dump.rdb" ]; then
    cp "$rdb" "$dir/dump.rdb.restoring"
    mv "$dir/dump.rdb.restoring" "$dir/dump.rdb"
fi

redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --dbfilename dump.rdb \
    --appendonly no --save "" >&2 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT

waited=0
until [ "$(cli PING 2>/dev/null)" = PONG ]; do
    if ! kill -0 "$pid" 2>/dev/null; then
        say "redis-server could not load $rdb"
        exit 1
    fi
    waited=$((waited + 1))
    if [ "$waited" -gt "${RESTORE_TIMEOUT:-3600}" ]; then
        say "redis-server did not load $rdb within ${waited} s"
        exit 1
    fi
    sleep 1
done
keys=$(cli DBSIZE)

# Turning AOF on at run time forks a rewrite that writes the whole data set as the new AOF.
cli CONFIG SET appendonly yes >/dev/null
while [ "$(field aof_rewrite_in_progress)" != 0 ] || [ "$(field aof_rewrite_scheduled)" != 0 ]; do
    sleep 1
done
if [ "$(field aof_last_bgrewrite_status)" != ok ]; then
    say "writing the AOF failed; see the output above"
    exit 1
fi
cli SHUTDOWN >/dev/null 2>&1 || true
wait "$pid" || true
trap - EXIT

if [ ! -e "$dir/appendonlydir" ] && [ ! -e "$dir/appendonly.aof" ]; then
    say "no AOF was written in $dir"
    exit 1
fi
say "restored $keys keys into $dir; start Redis with appendonly yes"
