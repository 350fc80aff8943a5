#!/usr/bin/env python3
"""benchlab's memory on a long run, in compressed time (make bench-memory).

Runs one long point-query step (64 threads on SQLite by default) with the
1-second series and histograms on, reads benchlab's resident set (VmRSS of
/proc/PID/status) every --sample seconds and prints it, then the growth per
hour fitted over the measured part (least squares over the samples after the
first minute). A benchmark that prints numbers, not a test.

Next to the resident set it prints what the Go runtime holds (mapped and not
released: heap, stacks, metadata) and the Go heap's objects, read from
benchlab's --metrics-addr; the rest of the resident set ("C") is memory
allocated outside Go, which for SQLite is mostly its page cache (cache_size
per connection, 64 MiB by default, filled as each connection reads pages).

  scripts/rss-long-run.py                      # 30 minutes, a sample a minute
  scripts/rss-long-run.py --minutes 3 --sample 15
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
    """benchlab_go_memory_bytes and benchlab_go_heap_bytes in MB, or NaNs."""
    try:
        with urllib.request.urlopen(f"http://{addr}/metrics", timeout=5) as r:
            text = r.read().decode()
    except OSError:
        return float("nan"), float("nan")
    vals = []
    for name in ("benchlab_go_memory_bytes", "benchlab_go_heap_bytes"):
        m = re.search(rf"^{name} (\S+)$", text, re.M)
        vals.append(float(m.group(1)) / 2**20 if m else float("nan"))
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
    ap.add_argument("--engine", default="sqlite", help="sqlite, or postgres/mariadb (a server benchlab starts)")
    ap.add_argument("--table-size", type=int, default=100_000)
    ap.add_argument("--benchlab", default=os.path.join(ROOT, "bin", "benchlab"))
    a = ap.parse_args()
    if a.minutes <= 0 or a.sample <= 0 or a.threads < 1:
        print("rss-long-run: --minutes, --sample and --threads must be positive", file=sys.stderr)
        sys.exit(2)
    if not os.access(a.benchlab, os.X_OK):
        print(f"rss-long-run: --benchlab: {a.benchlab} is not an executable (make build)", file=sys.stderr)
        sys.exit(2)
    work = tempfile.mkdtemp(prefix="benchlab-rss.")
    secs = int(a.minutes * 60)
    addr = f"127.0.0.1:{free_port()}"
    cmd = [a.benchlab, "run", "--engine", a.engine, "--tests", "point-query", "--threads", str(a.threads),
           "--time", str(secs), "--warmup", "0s", "--table-size", str(a.table_size), "--report-interval", "0", "--metrics-addr", addr,
           "--store", os.path.join(work, "r.db"), "--workdir", work, "--yes"]
    print(f"benchlab RSS on a {a.minutes:g}-minute point-query step, {a.threads} threads, {a.engine}; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}, {os.cpu_count()} CPUs")
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True, text=True)
    samples = []
    try:
        # The step starts once the load is done: its header line says so.
        for line in p.stdout:
            if line.startswith("prepare:"):
                break
        t0 = time.monotonic()
        print(f"{'minute':>7} {'RSS MB':>8} {'Go MB':>8} {'heap MB':>8} {'C MB':>8}")
        while p.poll() is None:
            now = time.monotonic() - t0
            if now > secs:
                break
            mb = rss_mb(p.pid)
            go, heap = go_memory(addr)
            samples.append((now, mb, go))
            print(f"{now / 60:>7.2f} {mb:>8.1f} {go:>8.1f} {heap:>8.1f} {mb - go:>8.1f}", flush=True)
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
    fit = [s for s in samples if s[0] >= 60] or samples
    if len(fit) >= 2:
        n = len(fit)
        rss = slope_per_hour([(t, m) for t, m, _ in fit])
        go = slope_per_hour([(t, g) for t, _, g in fit])
        print(f"peak RSS {max(s[1] for s in samples):.1f} MB, Go {max(s[2] for s in samples):.1f} MB; growth "
              f"{rss:+.1f} MB per hour (Go {go:+.1f}) (least squares over {n} samples from minute {fit[0][0] / 60:.1f})")
    else:
        print("too few samples for a growth rate (raise --minutes or lower --sample)")


if __name__ == "__main__":
    main()
