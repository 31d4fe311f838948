#!/bin/sh
# Writes a consistent RDB snapshot of a running Redis to standard output; messages go to stderr.
# Made to be piped into the Redis container, so nothing needs installing there:
#   docker compose -f deploy/compose.yaml exec -T redis sh -s < deploy/redis/backup.sh > backup.rdb
#   kubectl exec -i redis-0 -- sh -s < deploy/redis/backup.sh > backup.rdb
# REDIS_HOST / REDIS_PORT (default 127.0.0.1:6379) choose the server, REDISCLI_AUTH its password.
# It reads the snapshot from the server's own disk, so it has to run beside that server.
set -eu

# stdin is this script when run with `sh -s`: no command may read it.
cli() { redis-cli -h "${REDIS_HOST:-127.0.0.1}" -p "${REDIS_PORT:-6379}" "$@" </dev/null; }
field() { cli INFO persistence | tr -d '\r' | sed -n "s/^$1://p"; }
say() { echo "backup: $*" >&2; }

before=$(cli LASTSAVE)
# LASTSAVE counts whole seconds: wait for the server's clock to pass it so a new save is visible.
while [ "$(cli TIME | head -n 1)" -le "$before" ]; do sleep 1; done

# SCHEDULE: if an AOF rewrite is running, save right after it instead of failing.
cli BGSAVE SCHEDULE >/dev/null
waited=0
until [ "$(cli LASTSAVE)" -gt "$before" ]; do
    if [ "$(field rdb_bgsave_in_progress)" = 0 ] && [ "$(field rdb_last_bgsave_status)" = err ]; then
        say "BGSAVE failed; see the Redis log"
        exit 1
    fi
    waited=$((waited + 1))
    if [ "$waited" -gt "${BACKUP_TIMEOUT:-3600}" ]; then
        say "no snapshot after ${waited} s"
        exit 1
    fi
    sleep 1
done

dir=$(cli CONFIG GET dir | sed -n 2p)
file=$(cli CONFIG GET dbfilename | sed -n 2p)
# Redis writes a temporary file and renames it, so this file is always a complete snapshot.
say "snapshot of $(cli DBSIZE) keys from $dir/$file"
cat "$dir/$file"
