#!/usr/bin/env bash
# make bench: every row of the overhead table from one invocation on this
# machine: the Go benchmarks and the compiler-rt XRay FDR harness, ${COUNT:-10}
# rounds (with xrayotel's CPU per slow span and per held request), then benchstat's summary and the table with ratios to the floor
# (bench/README.md shows the latest one). The floor is two reads of the
# clock the tracer uses on this CPU (its name heads the output).
#
# Each round runs every row once, so the rounds interleave the rows: a
# ratio compares rows measured minutes apart at most, and a noisy spell on
# this shared machine lands in one round of every row instead of in all
# the runs of one row (go test -count runs a row's runs back to back).
set -euo pipefail
cd "$(dirname "$0")/.."
count=${COUNT:-10}
if ! command -v clang++-19 >/dev/null 2>&1 || ! ls /usr/lib/llvm-19/lib/clang/19/lib/linux/libclang_rt.xray-x86_64.a >/dev/null 2>&1; then
  echo "error: the compiler-rt row needs clang-19 and its XRay runtime. Install them with:" >&2
  echo "  apt-get update && apt-get install -y clang-19 libclang-rt-19-dev" >&2
  exit 1
fi
mkdir -p bin
clang++-19 -O2 -fxray-instrument -fxray-instruction-threshold=1 -pthread bench/compilerrt/harness.cc -o bin/xray-harness
go test -C bench -c -o ../bin/bench.test .
# xrayotel is a module of its own: its CPU per slow span, and what holding
# a request's spans costs, are rows too.
go test -C xrayotel -c -o ../bin/xrayotel.test .
out=bin/bench.txt
{
  echo "# $(date -u +%FT%TZ) $(uname -srm), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) CPUs, $(go version), $count rounds"
  for round in $(seq "$count"); do
    # go test runs a package's binary in the package's directory.
    (cd bench && ../bin/bench.test -test.run '^$' -test.bench . -test.benchmem -test.count 1)
    (cd xrayotel && ../bin/xrayotel.test -test.run '^$' -test.bench '^BenchmarkSlowSpan$|^BenchmarkRequestSpans$' -test.benchmem -test.count 1)
    # compiler-rt prints its own frequency warnings on stderr; keep them out.
    XRAY_OPTIONS="patch_premain=false xray_mode=xray-fdr verbosity=0" bin/xray-harness 1 20000000 2>/dev/null
  done
} | tee "$out"
echo
go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da "$out" || true
echo
# The clock and record path the rows measure (printed by bench's TestMain).
grep -m1 '^# clock: ' "$out" || true
go run -C bench ./table < "$out"
echo
# The real-module rows: tracing off and on against plain builds of real
# modules' own benchmark suites and of an HTTP server (QUICK=1 for a short
# run). See bench/README.md, "Real modules".
scripts/bench-realmod.sh
