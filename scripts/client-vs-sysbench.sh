#!/usr/bin/env bash
# Client efficiency benchmark (issue: real servers, item 8): sysbench 1.0.20's
# oltp_point_select (--rand-type=uniform) against benchlab's point-query on the
# same PostgreSQL server and table, at 1, 2, 4 and 8 threads, alternating the two
# tools for ROUNDS rounds, and prints the medians of QPS and client CPU
# microseconds per query side by side. A benchmark that prints numbers, not a test.
#
#   scripts/client-vs-sysbench.sh            # SECS=30 ROUNDS=3 THREADS="1 2 4 8"
#   SECS=10 ROUNDS=3 scripts/client-vs-sysbench.sh
#
# Needs: sysbench, PostgreSQL 15 from Debian (/usr/lib/postgresql/15/bin), python3,
# and a benchlab binary (built into bin/ if missing). Runs as root or a normal user;
# the server runs as the postgres user when started by root.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${SECS:-30}
ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-"1 2 4 8"}
ROWS=${ROWS:-100000}
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
PORT=${PORT:-55432}
command -v sysbench >/dev/null || { echo "sysbench not found (apt-get install sysbench)" >&2; exit 2; }
[ -x "$PGBIN/postgres" ] || { echo "no PostgreSQL at $PGBIN (apt-get install postgresql-15)" >&2; exit 2; }
[ -x bin/benchlab ] || make build >/dev/null

work=$(mktemp -d /tmp/benchlab-cvs.XXXXXX)
chmod 755 "$work"
as_pg() { if [ "$(id -u)" = 0 ]; then su postgres -s /bin/sh -c "$*"; else sh -c "$*"; fi; }
mkdir -p "$work/data" && { [ "$(id -u)" = 0 ] && chown postgres "$work/data" || true; }
cleanup() { as_pg "$PGBIN/pg_ctl -D $work/data -m fast stop" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT INT TERM
as_pg "$PGBIN/initdb -D $work/data --auth=trust -U postgres" >/dev/null
as_pg "$PGBIN/pg_ctl -D $work/data -l $work/data/log -w -o '-c listen_addresses=127.0.0.1 -p $PORT -c unix_socket_directories=$work/data -c shared_buffers=256MB -c max_connections=50' start" >/dev/null
as_pg "$PGBIN/psql -h 127.0.0.1 -p $PORT -U postgres -qc 'CREATE DATABASE sbtest'" >/dev/null

sb=(sysbench oltp_point_select --db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port=$PORT --pgsql-user=postgres
    --pgsql-db=sbtest --tables=1 --table-size=$ROWS --rand-type=uniform)
"${sb[@]}" prepare >/dev/null

cat > "$work/spec.toml" <<TOML
name = "client-vs-sysbench"
[[target]]
name = "pg"
engine = "postgres"
dsn = "postgres://postgres@127.0.0.1:$PORT/sbtest?sslmode=disable"
[workload]
tests = ["point-query"]
table_size = $ROWS
threads = [1]
warmup = "0s"
postwrite_wait = "0s"
report_interval = "0s"
TOML

results="$work/results.tsv"
for round in $(seq "$ROUNDS"); do
  for t in $THREADS; do
    # sysbench: QPS from its summary, client CPU from /usr/bin/time.
    out=$( { /usr/bin/time -f 'CPU %U %S' "${sb[@]}" --threads=$t --time=$SECS run; } 2>&1 )
    q=$(echo "$out" | awk '/queries:/ {print $2; exit}')
    qps=$(echo "$out" | awk -F'[( ]+' '/queries:/ {for(i=1;i<=NF;i++) if ($i=="per") {print $(i-1); exit}}')
    cpu=$(echo "$out" | awk '/^CPU/ {print $2+$3}')
    echo -e "sysbench\t$t\t$qps\t$(python3 -c "print($cpu*1e6/$q)")" >> "$results"
    # benchlab: QPS and client CPU of the measured part, from its results file.
    bin/benchlab run "$work/spec.toml" --threads $t --time $SECS --store "$work/b.db" >/dev/null
    python3 - "$work/b.db" "$t" >> "$results" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
st, secs, cpu = db.execute("""SELECT statements, seconds, client_cpu_s FROM results
    WHERE test = 'point-query' AND action = 0 ORDER BY id DESC LIMIT 1""").fetchone()
print(f"benchlab\t{sys.argv[2]}\t{st/secs:.2f}\t{cpu*1e6/st:.2f}")
PY
  done
done

python3 - "$results" "$SECS" "$ROUNDS" <<'PY'
import sys, statistics, collections
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    tool, t, qps, cpu = line.split("\t")
    rows[int(t)][tool].append((float(qps), float(cpu)))
print(f"PostgreSQL point query, {sys.argv[2]} s per run, median of {sys.argv[3]} alternating rounds")
print(f"{'threads':>7} {'sysbench qps':>13} {'benchlab qps':>13} {'ratio':>6} {'sysbench us/q':>14} {'benchlab us/q':>14}")
for t in sorted(rows):
    s = rows[t]["sysbench"]; b = rows[t]["benchlab"]
    sq, bq = statistics.median(x[0] for x in s), statistics.median(x[0] for x in b)
    sc, bc = statistics.median(x[1] for x in s), statistics.median(x[1] for x in b)
    print(f"{t:>7} {sq:>13.0f} {bq:>13.0f} {bq/sq:>6.2f} {sc:>14.1f} {bc:>14.1f}")
PY
