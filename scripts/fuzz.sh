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
# from then on as a regression test. A run that fails with nothing but
# "context deadline exceeded" (Go's own -fuzztime race, no input written)
# gets one more window; a second failure counts.
set -eu

cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-20s}
FUZZMINIMIZETIME=${FUZZMINIMIZETIME:-5s}
PKGS=${PKGS:-./...}

marker=$(mktemp)
log=$(mktemp)
trap 'rm -f "$marker" "$log" "$log.start" "$log.status"' EXIT

# fuzz_one PKG TARGET: one -fuzztime window, its output kept in $log.
fuzz_one() {
	: >"$log.start"
	{
		status=0
		$GO test -run '^$' -fuzz "^${2}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$FUZZMINIMIZETIME" "$1" 2>&1 || status=$?
		echo "$status" >"$log.status"
	} | tee "$log"
	return "$(cat "$log.status")"
}

# deadline_race PKG TARGET: the run that just failed reported nothing but
# "context deadline exceeded": no failing input written, no panic, no
# t.Error line, no new file in the package's testdata/fuzz.
deadline_race() {
	dir=$($GO list -f '{{.Dir}}' "$1")/testdata/fuzz/$2
	if [ -d "$dir" ] && [ -n "$(find "$dir" -type f -newer "$log.start" -print -quit)" ]; then
		rm -f "$log.start"
		return 1
	fi
	rm -f "$log.start"
	grep -q '^    context deadline exceeded$' "$log" || return 1
	# Every other line is fuzz progress or go test's summary.
	! grep -v -e '^fuzz: ' -e '^--- FAIL: ' -e '^    context deadline exceeded$' \
		-e '^FAIL$' -e '^FAIL[[:space:]]' -e '^exit status ' -e '^ok ' -e '^PASS$' "$log" | grep -q .
}
failed=""
ran=0
for pkg in $($GO list $PKGS); do
	targets=$($GO test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true)
	for target in $targets; do
		ran=$((ran + 1))
		echo "== $pkg $target ($FUZZTIME)"
		if fuzz_one "$pkg" "$target"; then
			continue
		fi
		if deadline_race "$pkg" "$target"; then
			# Go's coordinator can report its own -fuzztime deadline as a
			# failure (golang/go#51484): the timeout closes ctx before its
			# child fuzzCtx, and stop() compares the error with the child's.
			# That run found nothing, so the target gets one more window;
			# a second failure of any kind fails the script.
			echo "fuzz.sh: $target: bare 'context deadline exceeded' with no failing input (Go's -fuzztime race, golang/go#51484); running it once more"
			if fuzz_one "$pkg" "$target"; then
				continue
			fi
		fi
		failed="$failed $pkg.$target"
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
