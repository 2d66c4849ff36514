#!/usr/bin/env bash
# gotest.sh CONFIG [go test flags and packages]: one configuration of make
# test. Runs `go test -json` with the arguments, prints what a plain go test
# would (failures with their output, each skip with its reason, package
# lines) and appends every test's outcome to out/testledger/CONFIG.jsonl,
# which `make test` checks against .ci/skip-ledger.txt at the end
# (internal/testledger). Fails when go test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
config=$1
shift
dir=out/testledger
mkdir -p "$dir"
if [ ! -x "$dir/testledger" ]; then
  # The recorder runs on the host, whatever GOARCH or toolchain the tests use.
  env -u GOARCH -u GOTOOLCHAIN -u GOFLAGS "$GO" build -o "$dir/testledger" ./internal/testledger/cmd/testledger
fi
echo "[$config] ${GOTOOLCHAIN:+GOTOOLCHAIN=$GOTOOLCHAIN }${GOARCH:+GOARCH=$GOARCH }$GO test $*"
start=$SECONDS
# go test takes -C (run in another module's directory) only first.
chdir=()
if [ "${1:-}" = -C ]; then
  chdir=(-C "$2")
  shift 2
fi
"$GO" test "${chdir[@]}" -json "$@" 2>&1 | "$dir/testledger" record -config "$config" -o "$dir/$config.jsonl"
echo "[$config] passed in $((SECONDS - start)) s"
