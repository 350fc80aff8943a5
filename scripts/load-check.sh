#!/usr/bin/env bash
# Runs the whole test suite on a clean clone of HEAD while two busy loops
# keep both CPUs busy, ROUNDS times in a row (default 3), after one quiet
# round when QUIET is 1 (the default): each round prints its per-package
# times, slowest tests, flaky and failed tests (internal/testrun), and the
# end prints one line per round. Exits 1 when any round failed.
#   scripts/load-check.sh [ROUNDS] [QUIET]
set -uo pipefail
rounds=${1:-3}
quiet=${2:-1}
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/benchlab-load-check.XXXXXX)
loops=()
cleanup() {
  for p in "${loops[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT INT TERM
git clone -q "$repo" "$work/src" || exit 1
cd "$work/src" || exit 1
go vet ./... || exit 1
summary=()
failed=0
round() { # name
  local log="$work/$1.log" start end code
  start=$(date +%s)
  go run ./internal/testrun -flakes "$repo/.flakes.log" -- -count=1 -timeout 25m ./... >"$log" 2>&1
  code=$?
  end=$(date +%s)
  sed -n '/^slowest /,$p' "$log"
  grep -E '^(--- FAIL|FAIL|FAILED|  FLAKY)' "$log"
  summary+=("$1: exit $code in $((end - start)) s, load average $(cut -d' ' -f1-3 /proc/loadavg); $(grep '^tests:' "$log" | tail -1)")
  [ "$code" = 0 ] || failed=1
}
if [ "$quiet" = 1 ]; then
  echo "== quiet round (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  round quiet
fi
for i in 1 2; do
  nice -n 5 sh -c 'while :; do :; done' &
  loops+=($!)
done
for r in $(seq 1 "$rounds"); do
  echo "== busy round $r of $rounds (two busy loops at nice 5)"
  round "busy-$r"
done
echo
printf '%s\n' "${summary[@]}"
exit $failed
