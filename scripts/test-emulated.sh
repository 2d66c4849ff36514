#!/usr/bin/env bash
# make test, emulated part: the suite on the clock paths this machine's CPU
# does not take, under qemu-user (https://www.qemu.org/docs/master/user/):
#   - arm64 (fast_arm64.s, the CNTVCT clock): internal/asm, the engine packages and the API;
#   - amd64 on "-cpu qemu64": no RDTSCP, no invariant TSC, so the nanotime
#     clock and its fast path, and the lfence+rdtsc fast path forced by the
#     tests (tsc.Runnable: qemu cannot advertise an invariant TSC); asm and
#     the engine packages;
#   - amd64 on "-cpu max": RDTSCP, the clock-relevant packages;
#   - on both amd64 models, the API's interop tests: files written on the
#     nanotime and RDTSCP clocks, read back by llvm-xray (about 20 s each;
#     the whole API suite would take 3 minutes each).
# Natively the machine takes one more path (RDTSCP, or LFENCE;RDTSC where
# RDTSCP is hidden and the TSC invariant), so every path runs on every run.
# GOXRAY_EMULATOR tells tests that cannot hold under emulation (RSS, child
# processes, /proc/cpuinfo against CPUID) to skip, saying why.
# qemu-user runs host binaries that tests exec (llvm-xray) natively.
# Each run records its outcomes for make test's skip ledger (scripts/gotest.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
for q in qemu-aarch64-static qemu-x86_64-static; do
  if ! command -v "$q" >/dev/null 2>&1; then
    echo "error: $q is missing; install it with: apt-get install -y qemu-user-static" >&2
    exit 1
  fi
done
run() {
  local config=$1 emu=$2 arch=$3; shift 3
  GOXRAY_EMULATOR="$emu" GOARCH=$arch GO=$GO scripts/gotest.sh "$config" -count=1 -timeout 30m -exec "$emu" "$@"
}
run arm64 "qemu-aarch64-static" arm64 ./internal/asm ./internal/stream ./internal/settings ./internal/engine ./internal/buffer ./internal/flush ./internal/glayout ./internal/gotrace ./internal/instrmap ./internal/registry ./internal/tsc .
run qemu64 "qemu-x86_64-static -cpu qemu64" amd64 ./internal/asm ./internal/engine ./internal/buffer ./internal/flush ./internal/glayout ./internal/gotrace ./internal/instrmap ./internal/registry ./internal/tsc
run qemu-max "qemu-x86_64-static -cpu max" amd64 ./internal/asm ./internal/tsc ./internal/engine
run qemu64 "qemu-x86_64-static -cpu qemu64" amd64 -run Interop .
run qemu-max "qemu-x86_64-static -cpu max" amd64 -run Interop .
