#!/usr/bin/env bash
# The stand-in for the official postgres image's entrypoint (test/docker-image.pl:
# the official image cannot be pulled here). Written from that image's documented
# behaviour (its page on Docker Hub, "How to extend this image" and "Environment
# Variables"), not from its code:
# - arguments that start with "-" are options of postgres: "postgres" is put before them;
# - started as root, it makes PGDATA and /var/run/postgresql the postgres user's and runs
#   itself again as that user (gosu);
# - on an empty PGDATA: refuses to initialise without POSTGRES_PASSWORD (unless
#   POSTGRES_HOST_AUTH_METHOD=trust); initdb (POSTGRES_INITDB_ARGS) with POSTGRES_USER
#   (default postgres) and the password, a pg_hba.conf line for every host by
#   POSTGRES_HOST_AUTH_METHOD (default scram-sha-256), POSTGRES_DB (default
#   POSTGRES_USER) created; then, on a server listening only on its unix socket and
#   started with the container's arguments, every file of /docker-entrypoint-initdb.d
#   in name order: *.sql run by psql as POSTGRES_USER in POSTGRES_DB, *.sh executed
#   if executable and sourced if not; the server stopped;
# - a PGDATA that holds a cluster (PG_VERSION) is never initialised again: the scripts
#   run once;
# - then exec postgres with the arguments, in the foreground.
set -Eeuo pipefail

if [ "${1:0:1}" = '-' ]; then
    set -- postgres "$@"
fi

if [ "$1" = postgres ] && [ "$(id -u)" = 0 ]; then
    mkdir -p "$PGDATA"
    chown postgres: "$PGDATA"
    chmod 700 "$PGDATA"
    mkdir -p /var/run/postgresql
    chown postgres: /var/run/postgresql
    chmod 3777 /var/run/postgresql
    exec gosu postgres "$BASH_SOURCE" "$@"
fi

if [ "$1" = postgres ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
    : "${POSTGRES_USER:=postgres}" "${POSTGRES_DB:=$POSTGRES_USER}"
    : "${POSTGRES_HOST_AUTH_METHOD:=scram-sha-256}" "${POSTGRES_INITDB_ARGS:=}"
    if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "$POSTGRES_HOST_AUTH_METHOD" != trust ]; then
        echo >&2 'Error: Database is uninitialized and superuser password is not specified.'
        echo >&2 '       You must specify POSTGRES_PASSWORD to a non-empty value for the'
        echo >&2 '       superuser. For example, "-e POSTGRES_PASSWORD=password" on "docker run".'
        exit 1
    fi
    password_file=$(mktemp)
    printf '%s\n' "${POSTGRES_PASSWORD:-}" >"$password_file"
    # shellcheck disable=SC2086
    initdb --username="$POSTGRES_USER" --pwfile="$password_file" $POSTGRES_INITDB_ARGS
    rm -f "$password_file"
    printf '\nhost all all all %s\n' "$POSTGRES_HOST_AUTH_METHOD" >>"$PGDATA/pg_hba.conf"

    # the server the scripts run against: the unix socket only
    shift
    pg_ctl -D "$PGDATA" -w start -o "$(printf '%q ' -c listen_addresses= -p 5432 "$@")"
    export PGUSER=$POSTGRES_USER PGPASSWORD=${POSTGRES_PASSWORD:-} PGHOST=/var/run/postgresql
    psql=(psql -v ON_ERROR_STOP=1 --no-psqlrc)
    if [ "$POSTGRES_DB" != postgres ]; then
        "${psql[@]}" --dbname postgres --set db="$POSTGRES_DB" <<<'CREATE DATABASE :"db";'
    fi
    for file in /docker-entrypoint-initdb.d/*; do
        [ -e "$file" ] || continue
        case "$file" in
            *.sh)
                if [ -x "$file" ]; then
                    echo "$0: running $file"; "$file"
                else
                    echo "$0: sourcing $file"; . "$file"
                fi ;;
            *.sql) echo "$0: running $file"; "${psql[@]}" --dbname "$POSTGRES_DB" -f "$file" ;;
            *) echo "$0: ignoring $file" ;;
        esac
    done
    unset PGPASSWORD
    pg_ctl -D "$PGDATA" -m fast -w stop
    set -- postgres "$@"
    echo 'PostgreSQL init process complete; ready for start up.'
fi

exec "$@"
