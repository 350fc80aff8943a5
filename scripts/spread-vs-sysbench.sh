#!/usr/bin/env bash
# Run-to-run spread, benchlab against sysbench (issue 18 item 6): on one
# PostgreSQL server, ROUNDS rounds that each load a fresh table and read it at
# once, alternating the two tools: sysbench 1.0.20's cleanup + prepare
# (--rand-type=uniform, so k is uniform as sysbench 1.1 loads it) + an
# oltp_point_select run (1.0.20 has no --warmup-time), then benchlab's
# point-query test (its load, the postload cleanup, 5 s of warm-up, the test).
# Prints each round's QPS and, per tool, the mean and the coefficient of
# variation. A benchmark that prints numbers, not a test: on a shared machine
# the spread says as much about the neighbours.
#
#   scripts/spread-vs-sysbench.sh          # ROUNDS=5 SECS=30 THREADS=4 ROWS=1000000
#   BENCHLAB=/path/to/old/benchlab scripts/spread-vs-sysbench.sh   # another build, for a before/after
#
# Needs: sysbench, PostgreSQL 15 from Debian (/usr/lib/postgresql/15/bin),
# python3, and a benchlab binary (bin/benchlab, built if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
SECS=${SECS:-30}
THREADS=${THREADS:-4}
ROWS=${ROWS:-1000000}
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
PORT=${PORT:-55433}
# zonky's releases (benchlab install postgres 13.22) ship no psql: use Debian's, which talks to any version.
PSQL=${PSQL:-$PGBIN/psql}
[ -x "$PSQL" ] || PSQL=/usr/lib/postgresql/15/bin/psql
BENCHLAB=${BENCHLAB:-bin/benchlab}
command -v sysbench >/dev/null || { echo "sysbench not found (apt-get install sysbench)" >&2; exit 2; }
[ -x "$PGBIN/postgres" ] || { echo "no PostgreSQL at $PGBIN (apt-get install postgresql-15)" >&2; exit 2; }
if [ ! -x "$BENCHLAB" ]; then
  [ "$BENCHLAB" = bin/benchlab ] || { echo "BENCHLAB=$BENCHLAB is not an executable" >&2; exit 2; }
  make build >/dev/null
fi

work=$(mktemp -d /tmp/benchlab-spread.XXXXXX)
chmod 755 "$work"
as_pg() { if [ "$(id -u)" = 0 ]; then su postgres -s /bin/sh -c "$*"; else sh -c "$*"; fi; }
mkdir -p "$work/data" && { [ "$(id -u)" = 0 ] && chown postgres "$work/data" || true; }
cleanup() { as_pg "$PGBIN/pg_ctl -D $work/data -m fast stop" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT INT TERM
# No other local user may use the server: a password made for this run (in a 0600 file only while
# initdb reads it), SCRAM for every connection, the socket in the 0700 data dir. psql, sysbench and
# benchlab take it from PGPASSWORD.
PGPASSWORD=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
export PGPASSWORD
(umask 077; echo "$PGPASSWORD" > "$work/pwfile")
[ "$(id -u)" = 0 ] && chown postgres "$work/pwfile"
as_pg "$PGBIN/initdb -D $work/data --auth=scram-sha-256 --pwfile=$work/pwfile -U postgres" >/dev/null
rm -f "$work/pwfile"
as_pg "$PGBIN/pg_ctl -D $work/data -l $work/data/log -w -o '-c listen_addresses=127.0.0.1 -p $PORT -c unix_socket_directories=$work/data -c max_connections=50' start" >/dev/null
"$PSQL" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -qc 'CREATE DATABASE sbtest' >/dev/null

sb=(sysbench oltp_point_select --db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port=$PORT --pgsql-user=postgres
    --pgsql-db=sbtest --tables=1 --table-size=$ROWS --rand-type=uniform)

cat > "$work/spec.toml" <<TOML
name = "spread-vs-sysbench"
[[target]]
name = "pg"
engine = "postgres"
dsn = "postgres://postgres@127.0.0.1:$PORT/sbtest?sslmode=disable"
[workload]
tests = ["point-query"]
table_size = $ROWS
threads = [$THREADS]
read_time = "${SECS}s"
warmup = "5s"
report_interval = "0s"
TOML

results="$work/results.tsv"
for round in $(seq "$ROUNDS"); do
  "${sb[@]}" cleanup >/dev/null 2>&1 || true
  "${sb[@]}" prepare >/dev/null
  out=$("${sb[@]}" --threads="$THREADS" --time="$SECS" run)
  qps=$(echo "$out" | awk -F'[( ]+' '/queries:/ {for(i=1;i<=NF;i++) if ($i=="per") {print $(i-1); exit}}')
  echo -e "sysbench\t$round\t$qps" | tee -a "$results"
  "${sb[@]}" cleanup >/dev/null 2>&1 || true
  "$BENCHLAB" run "$work/spec.toml" --store "$work/b.db" >/dev/null
  python3 - "$work/b.db" "$round" <<'PY' | tee -a "$results"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
st, secs = db.execute("""SELECT statements, seconds FROM results
    WHERE test = 'point-query' AND action = 0 ORDER BY id DESC LIMIT 1""").fetchone()
print(f"benchlab\t{sys.argv[2]}\t{st/secs:.2f}")
PY
done

python3 - "$results" "$SECS" "$THREADS" "$ROWS" <<'PY'
import sys, statistics, collections
qps = collections.defaultdict(list)
for line in open(sys.argv[1]):
    tool, _, q = line.split("\t")
    qps[tool].append(float(q))
print(f"PostgreSQL point query, {sys.argv[4]} rows, {sys.argv[3]} threads, {sys.argv[2]} s per round, a fresh table per round")
for tool in ("sysbench", "benchlab"):
    xs = qps[tool]
    m = statistics.mean(xs)
    cv = statistics.stdev(xs) / m if len(xs) > 1 else float("nan")
    print(f"{tool:>9}: rounds {' '.join(f'{x:.0f}' for x in xs)}  mean {m:.0f}  cv {100*cv:.1f}%  min-max {100*(max(xs)-min(xs))/m:.1f}%")
PY
