#!/usr/bin/env bash
# The recursive rows over several code placements. A tracing-off ratio of
# a few percent is as large as what moving the same machine code by 32
# bytes does to it: Go starts functions on 32-byte boundaries, so a change
# anywhere before bench/recjson in the binary moves plain's and auto's
# loops across cache lines and changes the ratio by about ±1.5 % (the
# same source has read 1.02 in one build and 0.99 in the next). One build
# is one sample of that lottery; this script takes eight.
#
# It builds the bench test binary eight times, adding through -overlay
# (the tree is left as it is) 0–3 small functions to the front of
# recjson/auto and 0–1 to the front of recjson/plain, which shifts auto's
# code by 0–96 bytes and plain's relative to it by 32; then a ninth with
# -ldflags=-funcalign=64, where every function starts on a cache line.
# ROUNDS rounds (default 4) run each binary once in turn:
#   -bench 'Recursive(PlainCopy)?(Off)?Ratio' -benchtime 20000x
# and the script prints, per placement, where value and object start
# (mod 64) and the median of each ratio, then each ratio's mean over the
# eight default placements. RecursivePlainCopyRatio is the A/A control.
set -euo pipefail
cd "$(dirname "$0")/../bench"
rounds=${ROUNDS:-4}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

pad() { # package count file: count noinline functions an init keeps live
  {
    echo "package $1"
    echo "var placementPad int"
    echo "func init() {"
    for i in $(seq 1 "$2"); do echo "	placementPad = placementPad$i(placementPad)"; done
    echo "}"
    for i in $(seq 1 "$2"); do
      echo "//go:noinline"
      echo "func placementPad$i(x int) int { return x + $i }"
    done
  } >"$3"
}

placements="0_0 0_1 1_0 1_1 2_0 2_1 3_0 3_1 a64"
for p in $placements; do
  if [ "$p" = a64 ]; then
    go test -c -ldflags=-funcalign=64 -o "$work/$p.test" .
  else
    a=${p%_*} b=${p#*_} entries=()
    for side in auto:$a plain:$b; do
      pkg=${side%:*} n=${side#*:}
      [ "$n" = 0 ] && continue
      pad "$pkg" "$n" "$work/$pkg-pad.go"
      entries+=("\"$(pwd)/recjson/$pkg/a_placement_pad.go\": \"$work/$pkg-pad.go\"")
    done
    overlay=()
    if [ ${#entries[@]} -gt 0 ]; then
      (IFS=,; echo "{\"Replace\": {${entries[*]}}}") >"$work/$p.json"
      overlay=(-overlay "$work/$p.json")
    fi
    go test -c "${overlay[@]}" -o "$work/$p.test" .
  fi
  go tool nm -n "$work/$p.test" | grep -E 'recjson/(auto|plain)\.\(\*scanner\)\.(value|object)$' |
    while read -r addr _ name; do
      echo -n " ${name##*/}@$((0x$addr % 64))"
    done | sed "s/^/$p:/" >>"$work/where"
  echo >>"$work/where"
done

for r in $(seq 1 "$rounds"); do
  for p in $placements; do
    "$work/$p.test" -test.run '^$' -test.bench 'Recursive(PlainCopy)?(Off)?Ratio' \
      -test.benchtime 20000x | awk -v p="$p" '/Ratio/ { print p, $1, $(NF-1) }' >>"$work/runs"
  done
  echo "round $r of $rounds done" >&2
done

echo "where each function starts, mod 64:"
cat "$work/where"
awk -v order="$placements" '
  function median(list,   a, n, i, j, t) {
    n = split(list, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  {
    sub(/^Benchmark/, "", $2); sub(/-[0-9]+$/, "", $2)
    v[$1 " " $2] = v[$1 " " $2] " " $3
    if (!($2 in seen)) { seen[$2] = 1; rows[++nr] = $2 }
  }
  END {
    np = split(order, ps, " ")
    printf "%-12s", "placement"; for (k = 1; k <= nr; k++) printf " %26s", rows[k]; print ""
    for (i = 1; i <= np; i++) {
      printf "%-12s", ps[i]
      for (k = 1; k <= nr; k++) {
        m = median(v[ps[i] " " rows[k]]); printf " %26.4f", m
        if (ps[i] != "a64") { sum[k] += m; cnt[k]++ }
      }
      print ""
    }
    printf "%-12s", "mean of 8"; for (k = 1; k <= nr; k++) printf " %26.4f", sum[k] / cnt[k]; print ""
  }' "$work/runs"
