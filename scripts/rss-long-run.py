#!/usr/bin/env python3
"""benchlab's memory on a long run, in compressed time (make bench-memory).

Runs one long point-query step (64 threads on SQLite by default) with the
1-second series and histograms on, reads benchlab's resident set (VmRSS of
/proc/PID/status) every --sample seconds and prints it, then the growth per
hour fitted over the measured part (least squares over the samples after the
first minute, and over the second half of the step, whose slope the 3-hour
figure extends). A benchmark that prints numbers, not a test.

Next to the resident set it prints, read from benchlab's --metrics-addr, what
the Go runtime holds (mapped and not released: heap, stacks, metadata), the
Go heap's objects, and what SQLite holds from its allocator (sqlite3_memory_used:
its page caches, cache_size per connection, 64 MiB by default, filled as each
connection reads pages, plus schemas and statements; on a server engine only the
results store's, a few MB). benchlab's own memory
("own") is the resident set less SQLite's: the Go runtime's part plus memory
allocated in C outside SQLite (thread stacks, malloc's overhead). The growth
per hour and the peak are given for both; the target of issue 19 (below 200 MB)
is benchlab's own memory, SQLite's page cache being the engine's, configured
like a server's buffer pool.

  scripts/rss-long-run.py                      # 30 minutes on SQLite, a sample a minute
  scripts/rss-long-run.py --minutes 3 --sample 15
  scripts/rss-long-run.py --engine sqlite,postgres   # one step on each, one after the other
"""

import argparse
import os
import re
import socket
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def go_memory(addr):
    """benchlab_go_memory_bytes, benchlab_go_heap_bytes and the sum of
    benchlab_engine_memory_bytes (in-process engines: SQLite) in MB, or NaNs."""
    try:
        with urllib.request.urlopen(f"http://{addr}/metrics", timeout=5) as r:
            text = r.read().decode()
    except OSError:
        return float("nan"), float("nan"), float("nan")
    vals = []
    for name in ("benchlab_go_memory_bytes", "benchlab_go_heap_bytes"):
        m = re.search(rf"^{name} (\S+)$", text, re.M)
        vals.append(float(m.group(1)) / 2**20 if m else float("nan"))
    eng = re.findall(r"^benchlab_engine_memory_bytes\{[^}]*\} (\S+)$", text, re.M)
    vals.append(sum(float(v) for v in eng) / 2**20 if eng else float("nan"))
    return tuple(vals)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def slope_per_hour(pts):
    n = len(pts)
    mt, mm = sum(t for t, _ in pts) / n, sum(m for _, m in pts) / n
    den = sum((t - mt) ** 2 for t, _ in pts)
    return sum((t - mt) * (m - mm) for t, m in pts) / den * 3600 if den else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=30, help="length of the measured step")
    ap.add_argument("--sample", type=float, default=60, help="seconds between RSS samples")
    ap.add_argument("--threads", type=int, default=64)
    ap.add_argument("--engine", default="sqlite",
                    help="sqlite, or postgres/mariadb (a server benchlab starts); several, comma-separated, run one after the other")
    ap.add_argument("--table-size", type=int, default=100_000)
    ap.add_argument("--benchlab", default=os.path.join(ROOT, "bin", "benchlab"))
    a = ap.parse_args()
    if a.minutes <= 0 or a.sample <= 0 or a.threads < 1:
        print("rss-long-run: --minutes, --sample and --threads must be positive", file=sys.stderr)
        sys.exit(2)
    if not os.access(a.benchlab, os.X_OK):
        print(f"rss-long-run: --benchlab: {a.benchlab} is not an executable (make build)", file=sys.stderr)
        sys.exit(2)
    engines = [e for e in a.engine.split(",") if e]
    if not engines:
        print("rss-long-run: --engine: want one or more engines, comma-separated (sqlite,postgres)", file=sys.stderr)
        sys.exit(2)
    summary = [measure(a, e) for e in engines]
    if len(summary) > 1:
        print()
        for line in summary:
            print(line)


def measure(a, engine):
    """Runs one step on engine, prints its samples and returns its summary line."""
    work = tempfile.mkdtemp(prefix="benchlab-rss.")
    secs = int(a.minutes * 60)
    addr = f"127.0.0.1:{free_port()}"
    cmd = [a.benchlab, "run", "--engine", engine, "--tests", "point-query", "--threads", str(a.threads),
           "--time", str(secs), "--warmup", "0s", "--table-size", str(a.table_size), "--report-interval", "0", "--metrics-addr", addr,
           "--store", os.path.join(work, "r.db"), "--workdir", work, "--yes"]
    print(f"benchlab RSS on a {a.minutes:g}-minute point-query step, {a.threads} threads, {engine}; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}, {os.cpu_count()} CPUs")
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True, text=True)
    samples = []
    try:
        # The step starts once the load is done: its header line says so.
        for line in p.stdout:
            if line.startswith("prepare:"):
                break
        t0 = time.monotonic()
        print(f"{'minute':>7} {'RSS MB':>8} {'own MB':>8} {'SQLite MB':>9} {'Go MB':>8} {'heap MB':>8} {'C MB':>8}")
        while p.poll() is None:
            now = time.monotonic() - t0
            if now > secs:
                break
            mb = rss_mb(p.pid)
            go, heap, eng = go_memory(addr)
            eng = 0.0 if eng != eng else eng  # no in-process engine gauge: nothing to take away
            own = mb - eng
            samples.append((now, mb, go, own, eng))
            print(f"{now / 60:>7.2f} {mb:>8.1f} {own:>8.1f} {eng:>9.1f} {go:>8.1f} {heap:>8.1f} {own - go:>8.1f}", flush=True)
            time.sleep(a.sample)
        out, _ = p.communicate(timeout=secs + 600)
    except BaseException:
        os.killpg(p.pid, 9)
        p.wait()
        raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if p.returncode != 0:
        print(f"rss-long-run: benchlab exited {p.returncode}:\n{out[-2000:]}", file=sys.stderr)
        sys.exit(1)
    head = f"{engine}, {a.threads} threads, {a.minutes:g} minutes:"
    fit = [s for s in samples if s[0] >= 60] or samples
    if len(fit) < 2:
        return f"{head} too few samples for a growth rate (raise --minutes or lower --sample)"
    # Two fits: over everything after the first minute, which includes the
    # climb while caches, buffers and the garbage collector's goal find their
    # level, and over the second half of the step (the steady state), whose
    # slope is what a run of hours keeps growing at; the 3-hour figure
    # extends the steady one.
    steady = [s for s in fit if s[0] >= samples[-1][0] / 2]
    if len(steady) < 3:
        steady = fit
    growth = [slope_per_hour([(s[0], s[i]) for s in fit]) for i in (1, 3, 2)]
    sgrowth = [slope_per_hour([(s[0], s[i]) for s in steady]) for i in (1, 3, 2)]
    peak = [max(s[i] for s in samples) for i in (1, 3, 4, 2)]
    line = (f"{head} peak RSS {peak[0]:.1f} MB = benchlab's own {peak[1]:.1f} (Go {peak[3]:.1f}) + SQLite's {peak[2]:.1f} "
            f"(peaks of each); growth per hour from minute {fit[0][0] / 60:.1f} ({len(fit)} samples): "
            f"RSS {growth[0]:+.1f} MB, own {growth[1]:+.1f}, Go {growth[2]:+.1f}; "
            f"in the second half, from minute {steady[0][0] / 60:.1f} ({len(steady)} samples): "
            f"RSS {sgrowth[0]:+.1f} MB, own {sgrowth[1]:+.1f}, Go {sgrowth[2]:+.1f} (least squares)")
    if steady[-1][0] - steady[0][0] >= 600:
        # From the second half's highest sample (the collector makes the
        # resident set swing), at the second half's rate if it grows.
        at3 = max(s[3] for s in steady) + max(sgrowth[1], 0) * (3 - steady[-1][0] / 3600)
        line += (f"; own at 3 hours, the second half's peak grown at its rate: {at3:.1f} MB "
                 f"({'meets' if at3 < 200 else 'misses'} the target of below 200)")
    print(line)
    return line

if __name__ == "__main__":
    main()
