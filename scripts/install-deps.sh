#!/usr/bin/env bash
# Installs the system packages benchlab's tests use, from Debian's packages,
# when they are missing: a C compiler (SQLite and RocksDB through cgo),
# PostgreSQL 15 and MariaDB 10.11 (the tests start their own servers),
# sysbench (the client yardstick), fio (the command suite's disk tests), RocksDB's library and db_bench, perf,
# Chromium (the HTML report test), xz-utils, Maven and a headless JRE (`benchlab install`
# fetches server releases from Maven Central with mvn), galera-4 (the galera
# engine's cluster nodes), haproxy (the proxy in front of them), MariaDB's MyRocks
# plugin (mariadb-plugin-rocksdb) and pgbouncer (the pooler target). Needs root for apt-get; without root it only
# lists what is missing. Stops the services the packages start: benchlab
# starts its own servers on loopback.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
pkgs=(gcc make git postgresql-15 mariadb-server sysbench librocksdb-dev rocksdb-tools linux-perf fio chromium fonts-liberation xz-utils maven default-jre-headless galera-4 haproxy mariadb-plugin-rocksdb pgbouncer)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "install-deps: missing Debian packages (run as root to install): ${missing[*]}" >&2
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
log=$(mktemp /tmp/install-deps.XXXXXX.log)
if ! { apt-get update -q && apt-get install -y -q --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
  tail -40 "$log" >&2
  echo "install-deps: apt-get failed (full log: $log)" >&2
  exit 1
fi
rm -f "$log"
# The packages start their default clusters; benchlab's tests start their own.
service postgresql stop >/dev/null 2>&1 || true
service mariadb stop >/dev/null 2>&1 || true
service haproxy stop >/dev/null 2>&1 || true
service pgbouncer stop >/dev/null 2>&1 || true
id postgres >/dev/null 2>&1 || useradd --system --home /var/lib/postgresql --shell /bin/false postgres
