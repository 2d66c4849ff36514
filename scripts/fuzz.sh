#!/bin/sh
# fuzz.sh: run every Go fuzz target of the module for a bounded time each.
#
#   FUZZTIME          time per target, as go test -fuzztime takes it (default 20s)
#   FUZZMINIMIZETIME  time to minimize each new input (default 5s): go test
#                     also minimizes every new interesting input and stops
#                     fuzzing meanwhile, so a long value wastes a short run
#   PKGS              packages to search for targets (default ./...)
#
# A target that finds a failure makes the script exit 1 after the other
# targets have run. go test leaves the failing input in
# <package>/testdata/fuzz/<Target>/; commit it: plain `go test` replays it
# from then on as a regression test.
set -eu

cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-20s}
FUZZMINIMIZETIME=${FUZZMINIMIZETIME:-5s}
PKGS=${PKGS:-./...}

marker=$(mktemp)
trap 'rm -f "$marker"' EXIT
failed=""
ran=0
for pkg in $($GO list $PKGS); do
	targets=$($GO test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true)
	for target in $targets; do
		ran=$((ran + 1))
		echo "== $pkg $target ($FUZZTIME)"
		if ! $GO test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$FUZZMINIMIZETIME" "$pkg"; then
			failed="$failed $pkg.$target"
		fi
	done
done

if [ "$ran" -eq 0 ]; then
	echo "fuzz.sh: no fuzz targets found in $PKGS" >&2
	exit 1
fi
if [ -n "$failed" ]; then
	echo "fuzz.sh: failures in:$failed" >&2
	echo "fuzz.sh: the failing inputs are in testdata/fuzz/ of those packages; commit them as regression tests" >&2
	find . -path '*/testdata/fuzz/*' -type f -newer "$marker" -print >&2
	exit 1
fi
echo "fuzz.sh: $ran targets, no failures"
