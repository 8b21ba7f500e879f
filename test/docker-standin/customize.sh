#!/bin/sh
# mmdebstrap's customize hook of the stand-in base (test/docker-standin/build): the
# root $1 laid out as the official postgres image's Dockerfile lays out its own
# (PostgreSQL from Debian instead of apt.postgresql.org, C.UTF-8 instead of a generated
# en_US.UTF-8): no main cluster, the sample configuration diverted to
# /usr/share/postgresql/postgresql.conf.sample with listen_addresses = '*', the socket
# directory (made with the image: mmdebstrap empties /run) and PGDATA,
# /docker-entrypoint-initdb.d; apt's lists and the essential hook's policy-rc.d removed.
set -eu
root=$1 major=$2
chroot "$root" pg_dropcluster --stop "$major" main 2>/dev/null || true
sed -ri 's/#(create_main_cluster) .*$/\1 = false/' "$root/etc/postgresql-common/createcluster.conf"
chroot "$root" dpkg-divert --add --rename --divert /usr/share/postgresql/postgresql.conf.sample.dpkg \
    "/usr/share/postgresql/$major/postgresql.conf.sample"
cp "$root/usr/share/postgresql/postgresql.conf.sample.dpkg" "$root/usr/share/postgresql/postgresql.conf.sample"
ln -s ../postgresql.conf.sample "$root/usr/share/postgresql/$major/"
sed -ri "s!^#?(listen_addresses)\s*=\s*\S+.*!\1 = '*'!" "$root/usr/share/postgresql/postgresql.conf.sample"
grep -qF "listen_addresses = '*'" "$root/usr/share/postgresql/postgresql.conf.sample"
install -d -o 999 -g 999 -m 1777 "$root/var/lib/postgresql/data"
mkdir -p "$root/docker-entrypoint-initdb.d"
rm -rf "$root"/var/lib/apt/lists/* "$root/usr/sbin/policy-rc.d"
