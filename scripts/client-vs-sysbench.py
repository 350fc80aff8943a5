#!/usr/bin/env python3
"""Client cost of benchlab against sysbench, measured the same way for both.

A benchmark that prints numbers, not a test (make bench-client). For each
database (PostgreSQL 15, MariaDB 10.11: servers this script starts on
127.0.0.1 in a temporary directory, as the unprivileged postgres and mysql
users when run by root, each with a password made for the run that every
tool takes from PGPASSWORD or MYSQL_PWD, so no other local user can use
them) and each workload:

  point   sysbench 1.0.20's oltp_point_select against benchlab's point-query on
          the same table (sbtest1, loaded by benchlab; sysbench reads the rows
          benchlab loaded last);
  tpcc    Percona's sysbench-tpcc Lua scripts (a checkout named by
          --lua-dir or TPCC_LUA_DIR) against benchlab's
          tpcc suite, 1 warehouse, both sending text-protocol SQL (benchlab
          prepared = false) at READ COMMITTED on PostgreSQL and REPEATABLE READ
          on MariaDB, as the issue measured them.

the two tools run in alternating rounds (the order flips every round). Both
print one line per second; for each thread count the script skips the first
--skip lines and takes the next --secs lines as the steady-state window. When
the line that opens the window arrives and when the line that closes it
arrives, it reads the tool's process CPU (utime + stime of /proc/PID/stat) and,
for TPC-C, the New-Orders the database has committed (sum of d_next_o_id).
QPS is the mean of the window's per-second qps values (point) or New-Orders
per second counted by the database (tpcc); client CPU per operation is the CPU
of the window over its operations (queries, or New-Order transactions), and
its system part (stime: the kernel's loopback TCP and scheduling, which a
client can hardly make cheaper) is shown apart. The table shows medians over
the rounds and the spread ((max-min)/median).

With --against OLD_BINARY the other side is an older benchlab build instead
of sysbench (an A/B of two builds under the same conditions: alternating
rounds, the same window, the same servers); the columns then read "old" and
"new" and the ratios are new/old.

Compact form for the whole table (both databases, point and TPC-C, 1 to 64
threads; an estimated 20-35 minutes on 2 CPUs, most of it benchlab's
TPC-C load, which every round repeats): --compact, which is --rounds 3
--skip 2 --secs 6 --rows 100000.

Every process has a time limit, the whole run has one (--max-minutes), and the
servers and the temporary directory are removed on exit, Ctrl-C or error.
"""

import argparse
import os
import pty
import re
import secrets
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PGBIN = os.environ.get("PGBIN", "/usr/lib/postgresql/15/bin")
LINE = re.compile(rb"thds: (\d+) tps: ([\d.]+) qps: ([\d.]+)")
CLK = os.sysconf("SC_CLK_TCK")
DEADLINE = [float("inf")]
LIVE = set()  # the tools' processes running now, killed on the way out


class Failure(Exception):
    """A step of the benchmark failed; the message says which."""


def die(msg):
    print("client-vs-sysbench: " + msg, file=sys.stderr)
    sys.exit(2)


def run(cmd, what, user=None, timeout=300, **kw):
    """Runs cmd to completion, raising Failure with its output if it fails."""
    if user is not None:
        cmd = ["runuser", "-u", user, "--"] + cmd
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout, **kw)
    except subprocess.TimeoutExpired:
        raise Failure(f"{what}: did not finish within {timeout} s")
    if p.returncode != 0:
        raise Failure(f"{what} failed (exit {p.returncode}):\n{p.stdout.decode(errors='replace')[-2000:]}")
    return p.stdout.decode()


def secret_file(path, text, user):
    """Writes text (holding a password) to a new file only its owner reads,
    given to user when set."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    if user:
        shutil.chown(path, user)


def kill_live():
    """Kills the tools' processes still running, with their children."""
    for p in list(LIVE):
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def cpu_ticks(pid):
    """(utime, stime, context switches) of a process: user and system
    (kernel) time in clock ticks, and the voluntary and involuntary context
    switches of its threads (summed over /proc/PID/task: /proc/PID/status
    counts only the first thread). A thread that ends inside a window takes
    its switches with it; both tools keep theirs for the whole run."""
    with open(f"/proc/{pid}/stat") as f:
        s = f.read()
    fields = s[s.rindex(")") + 2:].split()
    cs = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                        cs += int(line.split()[1])
        except OSError:
            pass  # the thread ended
    return int(fields[11]), int(fields[12]), cs


class Postgres:
    name = "PostgreSQL 15"

    def __init__(self, work, port):
        self.dir, self.port = os.path.join(work, "pg"), port
        self.user = "postgres" if os.geteuid() == 0 else None
        os.makedirs(self.dir)
        if self.user:
            shutil.chown(self.dir, self.user)
            os.chmod(work, 0o755)
        # Every tool (psql, sysbench, benchlab) takes the password from PGPASSWORD.
        os.environ["PGPASSWORD"] = secrets.token_hex(16)
        pwfile = os.path.join(work, "pg-pwfile")
        secret_file(pwfile, os.environ["PGPASSWORD"] + "\n", self.user)
        try:
            run([f"{PGBIN}/initdb", "-D", self.dir, "-U", "postgres", "--auth=scram-sha-256", f"--pwfile={pwfile}",
                 "--no-sync", "-E", "UTF8", "--locale=C"], "initdb", self.user)
        finally:
            os.remove(pwfile)
        opts = (f"-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories={self.dir} "
                "-c shared_buffers=512MB -c max_connections=200 -c fsync=off -c synchronous_commit=off")
        run([f"{PGBIN}/pg_ctl", "-D", self.dir, "-l", os.path.join(self.dir, "log"), "-w", "-t", "60", "-o", opts,
             "start"], "pg_ctl start", self.user)
        self.started = True
        for db in ("sbtest", "bltpcc"):
            self.sql("postgres", f"CREATE DATABASE {db}")

    def sql(self, db, q):
        return run([f"{PGBIN}/psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", db, "-Atqc", q],
                   "psql " + q, timeout=60).strip()

    def stop(self):
        if getattr(self, "started", False):
            subprocess.run(["runuser", "-u", self.user, "--"] * bool(self.user) +
                           [f"{PGBIN}/pg_ctl", "-D", self.dir, "-m", "immediate", "-w", "stop"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
            self.started = False

    def benchlab_target(self, db):
        return f'engine = "postgres"\ndsn = "postgres://postgres@127.0.0.1:{self.port}/{db}?sslmode=disable"'

    def sysbench_args(self, db):
        return ["--db-driver=pgsql", "--pgsql-host=127.0.0.1", f"--pgsql-port={self.port}", "--pgsql-user=postgres",
                f"--pgsql-db={db}"]

    trx_level = "RC"


# ACCOUNTS_SQL ends install-db's bootstrap: it drops the accounts made without
# a password (root at 127.0.0.1, ::1 and the host's name, escaped as install-db
# escapes it; the anonymous one) and gives root@localhost PASSWORD.
ACCOUNTS_SQL = r"""FLUSH PRIVILEGES;
SET @h = LOWER(REPLACE((SELECT REPLACE(@@hostname, '_', '\_')), '%', '\%'));
SET @s = IF(@h = 'localhost', 'DO 0', CONCAT('DROP USER IF EXISTS ''root''@''', @h, ''''));
PREPARE s FROM @s;
EXECUTE s;
DROP USER IF EXISTS 'root'@'127.0.0.1', 'root'@'::1', ''@'localhost';
ALTER USER 'root'@'localhost' IDENTIFIED BY 'PASSWORD';
"""


class MariaDB:
    name = "MariaDB 10.11"

    def __init__(self, work, port):
        self.dir, self.port = os.path.join(work, "my"), port
        os.makedirs(self.dir, 0o700)
        self.user = "mysql" if os.geteuid() == 0 else None
        if self.user:
            shutil.chown(self.dir, self.user)
            os.chmod(work, 0o755)
        files = os.path.join(self.dir, "files")
        os.makedirs(files, 0o700)
        if self.user:
            shutil.chown(files, self.user)
        self.sock = os.path.join(self.dir, "sock")
        cnf = os.path.join(self.dir, "my.cnf")
        with open(cnf, "w") as f:
            f.write(f"""[mysqld]
datadir={self.dir}/data
socket={self.sock}
port={port}
bind-address=127.0.0.1
pid-file={self.dir}/pid
log-error={self.dir}/log
skip-log-bin
innodb_buffer_pool_size=512M
innodb_log_file_size=256M
innodb_flush_log_at_trx_commit=2
max_connections=300
secure-file-priv={files}
""")
        # root@localhost and sb get a password made for the run, which the
        # mariadb client, sysbench and benchlab take from MYSQL_PWD; the
        # accounts install-db makes without one are dropped.
        os.environ["MYSQL_PWD"] = pw = secrets.token_hex(16)
        accounts = os.path.join(work, "my-accounts.sql")
        secret_file(accounts, ACCOUNTS_SQL.replace("PASSWORD", pw), None)
        user = [f"--user={self.user}"] if self.user else []
        try:
            run(["mariadb-install-db", f"--defaults-file={cnf}", "--auth-root-authentication-method=normal",
                 "--skip-test-db", f"--extra-file={accounts}"] + user, "mariadb-install-db")
        finally:
            os.remove(accounts)
        self.proc = subprocess.Popen(["mariadbd", f"--defaults-file={cnf}"] + user,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        for _ in range(300):
            if self.proc.poll() is not None:
                raise Failure("mariadbd exited at start:\n" + open(f"{self.dir}/log").read()[-2000:])
            if subprocess.run(["mariadb", f"--socket={self.sock}", "-uroot", "-e", "SELECT 1"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
                break
            time.sleep(0.2)
        else:
            raise Failure("mariadbd did not accept connections within 60 s")
        self.root_sql(f"CREATE USER sb@'127.0.0.1' IDENTIFIED BY '{pw}'; GRANT ALL ON *.* TO sb@'127.0.0.1'; "
                      "CREATE DATABASE sbtest; CREATE DATABASE bltpcc")

    def root_sql(self, q):
        return run(["mariadb", f"--socket={self.sock}", "-uroot", "-N", "-e", q], "mariadb " + q, timeout=60)

    def sql(self, db, q):
        return run(["mariadb", "-h127.0.0.1", f"-P{self.port}", "-usb", "-N", "-D", db, "-e", q], "mariadb " + q,
                   timeout=60).strip()

    def stop(self):
        if getattr(self, "proc", None) and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def benchlab_target(self, db):
        return f'engine = "mysql"\ndsn = "sb@tcp(127.0.0.1:{self.port})/{db}"'

    def sysbench_args(self, db):
        return ["--db-driver=mysql", "--mysql-host=127.0.0.1", f"--mysql-port={self.port}", "--mysql-user=sb",
                f"--mysql-db={db}"]

    trx_level = "RR"


def watch(cmd, threads, skip, secs, limit, counter, cwd=None, on_first=None):
    """Runs cmd on a pseudo-terminal (so both tools write each line as it is
    made) and measures each thread count's window; returns
    {threads: (qps_from_lines, (user_seconds, system_seconds), counted_ops)}.
    on_first(t), when given, is called as the first line of thread count t
    arrives."""
    master, slave = pty.openpty()
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, cwd=cwd, start_new_session=True)
    LIVE.add(p)
    os.close(slave)
    seen, opened, out = {}, {}, {}
    buf, tail = b"", []
    end = min(time.monotonic() + limit, DEADLINE[0])
    try:
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise Failure(f"{os.path.basename(cmd[0])} took longer than its {limit:.0f} s limit")
            r, _, _ = select.select([master], [], [], min(left, 1))
            if not r:
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                break
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for line in lines:
                tail = (tail + [line])[-30:]
                m = LINE.search(line)
                if not m:
                    continue
                t = int(m.group(1))
                if t not in threads or t in out:
                    continue
                n = seen.get(t, 0) + 1
                seen[t] = n
                if n == 1 and on_first is not None:
                    on_first(t)
                if n == skip:
                    opened[t] = (cpu_ticks(p.pid), counter(), [])
                elif skip < n <= skip + secs and t in opened:
                    opened[t][2].append(float(m.group(3)))
                    if n == skip + secs:
                        c0, k0, qps = opened[t]
                        c1, k1 = cpu_ticks(p.pid), counter()
                        out[t] = (statistics.fmean(qps), ((c1[0] - c0[0]) / CLK, (c1[1] - c0[1]) / CLK, c1[2] - c0[2]),
                                  None if k0 is None else k1 - k0)
        rc = p.wait(max(1, end - time.monotonic()))
    except BaseException:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        raise
    finally:
        os.close(master)
        LIVE.discard(p)
    if rc != 0:
        raise Failure(f"{' '.join(cmd[:3])} exited {rc}:\n" + b"\n".join(tail).decode(errors="replace"))
    missing = [t for t in threads if t not in out]
    if missing:
        raise Failure(f"{' '.join(cmd[:3])}: no full window for threads {missing} (lines seen: {seen}):\n" +
                      b"\n".join(tail).decode(errors="replace"))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", default="postgres,mariadb", help="postgres, mariadb or both (comma-separated)")
    ap.add_argument("--workload", default="point,tpcc", help="point, tpcc or both (comma-separated)")
    ap.add_argument("--threads", default="1,4,8,16,64")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds (at least 3 for a median)")
    ap.add_argument("--skip", type=int, default=5, help="per-second lines skipped before the window")
    ap.add_argument("--secs", type=int, default=20, help="seconds (per-second lines) in the window")
    ap.add_argument("--rows", type=int, default=200_000, help="rows of sbtest1 (point)")
    ap.add_argument("--benchlab-prepared", action="store_true",
                    help="tpcc: benchlab prepares its statements (sysbench-tpcc cannot)")
    ap.add_argument("--max-minutes", type=float, default=120, help="the whole run's time limit")
    ap.add_argument("--lua-dir", default=os.environ.get("TPCC_LUA_DIR", ""),
                    help="a checkout of sysbench-tpcc's Lua scripts (default: TPCC_LUA_DIR); needed for tpcc")
    ap.add_argument("--benchlab", default=os.path.join(ROOT, "bin", "benchlab"))
    ap.add_argument("--against", metavar="OLD_BINARY",
                    help="compare with another benchlab build instead of sysbench (A/B; ratios are new/old)")
    ap.add_argument("--compact", action="store_true",
                    help="the short form of the whole table: --rounds 3 --skip 2 --secs 6 --rows 100000")
    ap.add_argument("--together", action="store_true",
                    help="run both tools at once against the same server (side by side) instead of in turns")
    a = ap.parse_args()
    if a.compact:
        a.rounds, a.skip, a.secs, a.rows = 3, 2, 6, 100_000
    try:
        threads = [int(t) for t in a.threads.split(",")]
    except ValueError:
        die(f"--threads: {a.threads!r} is not a comma-separated list of numbers")
    dbs, loads = a.db.split(","), a.workload.split(",")
    for d in dbs:
        if d not in ("postgres", "mariadb"):
            die(f"--db: unknown database {d!r}; want postgres or mariadb")
    for w in loads:
        if w not in ("point", "tpcc"):
            die(f"--workload: unknown workload {w!r}; want point or tpcc")
    if a.rounds < 1 or a.skip < 1 or a.secs < 1:
        die("--rounds, --skip and --secs must be at least 1")
    if a.together and a.against is not None:
        die("--together and --against: side by side runs benchlab against sysbench only")
    if a.against is not None and not os.access(a.against, os.X_OK):
        die(f"--against: {a.against} is not an executable benchlab")
    if a.against is None and shutil.which("sysbench") is None:
        die("sysbench not found (apt-get install sysbench)")
    if "tpcc" in loads and a.against is None and not os.path.exists(os.path.join(a.lua_dir, "tpcc.lua")):
        die(f"--lua-dir (or TPCC_LUA_DIR): no tpcc.lua in {a.lua_dir or '(not given)'}; "
            "give a checkout of sysbench-tpcc's Lua scripts, or --workload point")
    if not os.access(a.benchlab, os.X_OK):
        die(f"--benchlab: {a.benchlab} is not an executable (make build)")
    DEADLINE[0] = time.monotonic() + a.max_minutes * 60

    work = tempfile.mkdtemp(prefix="benchlab-cvs.")
    servers = []

    def on_signal(sig, _):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_signal)
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    load0 = os.getloadavg()
    rows = []
    try:
        for di, d in enumerate(dbs):
            srv = (Postgres if d == "postgres" else MariaDB)(work, 55432 + di)
            servers.append(srv)
            for w in loads:
                rows += measure(a, srv, w, threads, work)
            srv.stop()
    except Failure as e:
        print(f"client-vs-sysbench: {e}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        print("client-vs-sysbench: interrupted", file=sys.stderr)
        sys.exit(130)
    finally:
        kill_live()
        for s in servers:
            try:
                s.stop()
            except Exception as e:  # keep cleaning up
                print(f"client-vs-sysbench: stopping {s.name}: {e}", file=sys.stderr)
        shutil.rmtree(work, ignore_errors=True)
    print_table(a, rows, started, load0)


def measure(a, srv, w, threads, work):
    """Runs the alternating rounds of one workload on one server; returns
    table rows."""
    length = a.skip + a.secs + 2
    spec = os.path.join(work, f"{w}.toml")
    if w == "point":
        body = (f'tests = ["point-query"]\ntable_size = {a.rows}\nread_time = "{length}s"\n'
                'k_rand_type = "special"\n')
        db = "sbtest"
    else:
        body = f'suite = "tpcc"\nwarehouses = 1\nwrite_time = "{length}s"\nprepared = {str(a.benchlab_prepared).lower()}\n'
        db = "bltpcc"
    with open(spec, "w") as f:
        f.write(f'name = "client-vs-sysbench"\n[[target]]\nname = "t"\n{srv.benchlab_target(db)}\n[workload]\n'
                f'{body}threads = [{", ".join(map(str, threads))}]\nwarmup = "0s"\npostwrite_wait = "0s"\n'
                'report_interval = "1s"\n')
    store = os.path.join(work, "b.db")
    bl = [a.benchlab, "run", spec, "--store", store, "--yes"]
    old = None if a.against is None else [a.against, "run", spec, "--store", os.path.join(work, "old.db"), "--yes"]
    if w == "point":
        sb = ["sysbench", "oltp_point_select"] + srv.sysbench_args("sbtest") + [
            "--tables=1", f"--table-size={a.rows}", "--rand-type=uniform"]
        sb_cwd, sb_count, bl_count = None, lambda: None, lambda: None
        print(f"# {srv.name} point: loading sbtest1 ({a.rows} rows) with benchlab", file=sys.stderr)
    else:
        sb = ["sysbench", "./tpcc.lua"] + srv.sysbench_args("sbtest") + [
            "--tables=1", "--scale=1", f"--trx_level={srv.trx_level}"]
        sb_cwd = a.lua_dir
        sb_count = lambda: int(srv.sql("sbtest", "SELECT sum(d_next_o_id) FROM district1"))
        bl_count = lambda: int(srv.sql("bltpcc", "SELECT sum(d_next_o_id) FROM district"))
        if old is None:
            print(f"# {srv.name} tpcc: sysbench-tpcc prepare (1 warehouse)", file=sys.stderr)
            run(sb + ["--threads=1", "prepare"], "sysbench-tpcc prepare", timeout=1800, cwd=sb_cwd)
    if w == "point" and not a.together:
        # A first, short benchlab run loads the table sysbench reads in round 1.
        with open(spec) as f:
            load_spec = f.read().replace(f'read_time = "{length}s"', 'read_time = "1s"').replace(
                f"threads = [{', '.join(map(str, threads))}]", "threads = [1]")
        with open(spec + ".load", "w") as f:
            f.write(load_spec)
        run([a.benchlab, "run", spec + ".load", "--store", store, "--yes"], "benchlab load", timeout=1800)
    res = {"sysbench": {t: [] for t in threads}, "benchlab": {t: [] for t in threads}}
    if a.together:
        together(a, srv, w, threads, spec, store, length, sb, sb_cwd, sb_count, bl_count, res)
        return rows_of(a, srv, w, threads, res)
    for r in range(a.rounds):
        order = ["sysbench", "benchlab"] if r % 2 == 0 else ["benchlab", "sysbench"]
        for tool in order:
            name = "old benchlab" if tool == "sysbench" and old is not None else tool
            print(f"# {srv.name} {w} round {r + 1}/{a.rounds}: {name}", file=sys.stderr)
            if tool == "sysbench" and old is not None:
                # The old build loads and runs as the new one does.
                got = watch(old, threads, a.skip, a.secs, len(threads) * (length + 30) + 900, bl_count)
                for t in threads:
                    res[tool][t].append(got[t])
            elif tool == "sysbench":
                for t in threads:
                    got = watch(sb + [f"--threads={t}", f"--time={length}", "--report-interval=1", "run"], [t],
                                a.skip, a.secs, length + 120, sb_count, cwd=sb_cwd)
                    res[tool][t].append(got[t])
            else:
                got = watch(bl, threads, a.skip, a.secs, len(threads) * (length + 30) + 900, bl_count)
                for t in threads:
                    res[tool][t].append(got[t])
    return rows_of(a, srv, w, threads, res)


def together(a, srv, w, threads, spec, store, length, sb, sb_cwd, sb_count, bl_count, res):
    """The side-by-side rounds: benchlab runs every thread count, and as the
    first per-second line of thread count t arrives a sysbench with t threads
    starts against the same server (and, for point, the same table), so both
    tools' windows fall on the same seconds and meet the same slow spells of
    the machine. benchlab's steps last long enough to cover sysbench's run,
    and its window opens one line later, as sysbench starts about a second
    after benchlab's step."""
    with open(spec) as f:
        body = f.read()
    key = "read_time" if w == "point" else "write_time"
    body = body.replace(f'{key} = "{length}s"', f'{key} = "{length + 3}s"')
    with open(spec, "w") as f:
        f.write(body)
    bl = [a.benchlab, "run", spec, "--store", store, "--yes"]
    for r in range(a.rounds):
        print(f"# {srv.name} {w} round {r + 1}/{a.rounds}: benchlab and sysbench side by side", file=sys.stderr)
        got, errs, helpers = {}, [], []

        def start_sysbench(t):
            def go():
                try:
                    got[t] = watch(sb + [f"--threads={t}", f"--time={length}", "--report-interval=1", "run"], [t],
                                   a.skip, a.secs, length + 120, sb_count, cwd=sb_cwd)[t]
                except BaseException as e:  # reported after benchlab's run
                    errs.append(e)
            h = threading.Thread(target=go, daemon=True)
            h.start()
            helpers.append(h)

        try:
            mine = watch(bl, threads, a.skip + 1, a.secs, len(threads) * (length + 40) + 900, bl_count,
                         on_first=start_sysbench)
        except BaseException:
            kill_live()  # the sysbench under way, so that its thread ends now
            raise
        finally:
            for h in helpers:
                h.join(length + 130)
        if errs:
            raise errs[0]
        for t in threads:
            res["benchlab"][t].append(mine[t])
            res["sysbench"][t].append(got[t])


def rows_of(a, srv, w, threads, res):
    """The table's rows of one workload on one server from the rounds'
    measurements."""
    rows = []
    for t in threads:
        row = {"db": srv.name, "workload": w, "threads": t}
        for tool in ("sysbench", "benchlab"):
            qps, us, sys_us, cs = [], [], [], []
            for lineqps, (user, system, switches), counted in res[tool][t]:
                rate = lineqps if counted is None else counted / a.secs
                ops = rate * a.secs
                qps.append(rate)
                us.append((user + system) * 1e6 / ops if ops > 0 else float("nan"))
                sys_us.append(system * 1e6 / ops if ops > 0 else float("nan"))
                cs.append(switches / ops if ops > 0 else float("nan"))
            row[tool] = (qps, us, sys_us, cs)
        rows.append(row)
    return rows


def paired(mine, other):
    """The median and spread of the rounds' ratios mine[r]/other[r]: each
    round's two measurements are a pair (side by side: the same seconds;
    alternating: neighbouring runs)."""
    rs = [m / o for m, o in zip(mine, other) if o]
    return med_spread(rs) if rs else (float("nan"), float("nan"))


def med_spread(xs):
    m = statistics.median(xs)
    return m, (max(xs) - min(xs)) / m * 100 if m else float("nan")


def print_table(a, rows, started, load0):
    other, short = ("old benchlab", "old") if a.against else ("sysbench", "sb")
    mine, mshort = ("new benchlab", "new") if a.against else ("benchlab", "bl")
    print(f"{mine} vs {other} client cost: started {started}, load average at start "
          f"{load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}, at end " + " ".join(f"{x:.2f}" for x in os.getloadavg()) +
          f", {os.cpu_count()} CPUs")
    how = ("rounds with both tools running at once against the same server, each with the row's threads, "
           "windows on the same seconds" if a.together else "alternating rounds")
    print(f"window: lines {a.skip + 1}-{a.skip + a.secs} of each thread count ({a.secs} s), median of {a.rounds} "
          f"{how}, spread = (max-min)/median; point: op = query, QPS from the tools' per-second lines; "
          f"tpcc: op = New-Order, rate = New-Orders/s counted by the database, benchlab "
          f"{'prepared' if a.benchlab_prepared else 'text protocol'}")
    print("ratio, cpu ratio: medians of each round's ratio of the two tools, with their spread")
    print(f"sys: the system (kernel) part of each tool's us/op (stime of /proc/PID/stat), medians; "
          f"{mshort} sys/{short} = {mine}'s system time over {other}'s whole CPU per op: at 0.8 or more the "
          f"kernel alone keeps {mine} from costing 0.8x {other}")
    print(f"{mshort} user: the user part of {mine}'s us/op, medians; user for 0.8x = 0.8 x {other}'s us/op - {mshort} sys, "
          f"the most the user part may cost for 0.8x with {mine}'s kernel time as measured (0 or less: no saving "
          f"outside the kernel reaches 0.8x)")
    print("cs/op: context switches per op of each tool's threads (voluntary and involuntary, /proc/PID/task/*/status), "
          "medians: a count, which a slow spell of the host does not inflate as it does CPU time")
    if a.against:
        print(f"old: {a.against}; new: {a.benchlab}")
    hdr = (f"{'database':<14} {'workload':<8} {'thr':>4} {other[:9] + ' op/s':>14} {'±%':>5} {mine[:9] + ' op/s':>14} "
           f"{'±%':>5} {'ratio':>6} {'±%':>5} {short + ' us/op':>9} {'±%':>5} {mshort + ' us/op':>9} {'±%':>5} "
           f"{'cpu ratio':>9} {'±%':>5} "
           f"{short + ' sys':>7} {mshort + ' sys':>7} {mshort + ' sys/' + short:>9} {mshort + ' user':>7} {'user for 0.8x':>13} "
           f"{short + ' cs/op':>8} "
           f"{mshort + ' cs/op':>8}")
    print(hdr)
    for r in rows:
        (sq, ss), (bq, bs) = med_spread(r["sysbench"][0]), med_spread(r["benchlab"][0])
        (sc, scs), (bc, bcs) = med_spread(r["sysbench"][1]), med_spread(r["benchlab"][1])
        ssys, bsys = statistics.median(r["sysbench"][2]), statistics.median(r["benchlab"][2])
        buser = statistics.median([u - k for u, k in zip(r["benchlab"][1], r["benchlab"][2])])
        qr, qrs = paired(r["benchlab"][0], r["sysbench"][0])
        cr, crs = paired(r["benchlab"][1], r["sysbench"][1])
        print(f"{r['db']:<14} {r['workload']:<8} {r['threads']:>4} {sq:>14.1f} {ss:>5.0f} {bq:>14.1f} {bs:>5.0f} "
              f"{qr:>6.2f} {qrs:>5.0f} {sc:>9.2f} {scs:>5.0f} {bc:>9.2f} {bcs:>5.0f} "
              f"{cr:>9.2f} {crs:>5.0f} {ssys:>7.2f} {bsys:>7.2f} {bsys / sc if sc else float('nan'):>9.2f} "
              f"{buser:>7.2f} {0.8 * sc - bsys:>13.2f} "
              f"{statistics.median(r['sysbench'][3]):>8.2f} {statistics.median(r['benchlab'][3]):>8.2f}")


if __name__ == "__main__":
    main()
