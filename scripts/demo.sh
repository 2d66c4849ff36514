#!/usr/bin/env bash
# make demo: run an instrumented workload, flush it with SIGUSR1 while it
# runs, and show what llvm-xray makes of the file.
set -euo pipefail
cd "$(dirname "$0")/.."
xray=$(scripts/need-llvm-xray.sh)
command -v go >/dev/null || { echo "error: go not found (https://go.dev/dl/)" >&2; exit 1; }

mkdir -p bin
go build -o bin/xraydemo ./cmd/xraydemo
dir=$(mktemp -d /tmp/xraydemo.XXXXXX)
./bin/xraydemo -dir "$dir" -duration 60s &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
sleep 3
echo
echo "\$ kill -USR1 $pid"
kill -USR1 "$pid"
trace=""
for _ in $(seq 100); do
  trace=$(ls "$dir"/xray-log.xraydemo.* 2>/dev/null | grep -v '\.tmp$' | head -1 || true)
  [ -n "$trace" ] && break
  sleep 0.1
done
[ -n "$trace" ] || { echo "error: no trace file appeared in $dir" >&2; exit 1; }
kill -TERM "$pid"
wait "$pid" || true
trap - EXIT
ls -l "$dir"
echo
echo "\$ llvm-xray account -sort=sum -sortorder=dsc -top=10 $trace"
"$xray" account -sort=sum -sortorder=dsc -top=10 "$trace"
echo
echo "\$ llvm-xray stack -aggregate-threads $trace   (top stacks)"
"$xray" stack -aggregate-threads "$trace" | head -40
echo
echo "Trace files are in $dir"
