#!/usr/bin/env bash
# A real module's own benchmarks over several code placements: plain,
# instrumented with tracing off and instrumented with tracing on, each
# built PLACEMENTS times with 0..PLACEMENTS-1 small functions added in
# front of the package's code (a file of its own, named to sort first), so
# that every function of the package moves by 32 bytes a step. On CPUs
# whose front end is sensitive to where a loop sits against 64-byte lines
# (AMD Zen 5: a recursive validator's plain build reads 0.70 to 0.85 µs by
# placement alone), one build of each is one draw of that lottery, and
# the ratio of two draws says little about what instrumenting costs: the
# mean over placements does.
#
#   MODULE=github.com/tidwall/gjson@v1.20.4 BENCH='^BenchmarkValid(Bytes)?$' \
#     scripts/bench-realmod-placements.sh
#
# MODULE is fetched through the module proxy (go mod download) into a
# temporary copy; PKG (default ".") is the package, relative to the
# module's root, whose benchmarks BENCH selects. ROUNDS rounds (default 3)
# run every binary in turn, each run -test.benchtime ${N}x (default 2000)
# -test.count COUNT (default 5); the fastest run of a binary in a round is
# its figure for the round (on a shared machine a run that another process
# interrupted is slower, never faster), and the median over rounds its
# figure. Printed per benchmark: each placement's plain, off and on
# figures with off/plain and on/plain, then the means over placements and
# their ratios, and plain's spread (slowest over fastest placement).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
module=${MODULE:?MODULE=path@version}
pkg=${PKG:-.}
bench=${BENCH:?BENCH=regexp of benchmarks}
placements=${PLACEMENTS:-8}
rounds=${ROUNDS:-3}
n=${N:-2000}
count=${COUNT:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/goxray" ./cmd/goxray
export GOXRAY_REPLACE=$root
unset XRAY_OPTIONS XRAY_FDR_OPTIONS
dir=$(go mod download -json "$module" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
[ -n "$dir" ] || { echo "error: go mod download $module failed" >&2; exit 1; }
cp -r "$dir" "$work/src" && chmod -R u+w "$work/src"
pkgdir=$work/src/$pkg
name=$(cd "$pkgdir" && go list -f '{{.Name}}' .)
mkdir -p "$work/bin" "$work/traces"
for p in $(seq 0 $((placements - 1))); do
  pad=$pkgdir/aaaa_placement_pad.go
  rm -f "$pad"
  if [ "$p" -gt 0 ]; then
    {
      echo "package $name"
      echo "var placementPad int"
      echo "func init() {"
      for i in $(seq 1 "$p"); do echo "	placementPad = placementPad$i(placementPad)"; done
      echo "}"
      for i in $(seq 1 "$p"); do
        echo "//go:noinline"
        echo "func placementPad$i(x int) int { return x + $i }"
      done
    } >"$pad"
  fi
  (cd "$pkgdir" && go test -c -o "$work/bin/plain$p" . && "$work/goxray" test -c -o "$work/bin/instr$p" . 2>/dev/null)
  echo "placement $p built" >&2
done
rm -f "$pkgdir/aaaa_placement_pad.go"

on_env="XRAY_OPTIONS=patch_premain=true xray_mode=xray-fdr xray_logfile_base=$work/traces/"
for r in $(seq "$rounds"); do
  for p in $(seq 0 $((placements - 1))); do
    for cfg in plain off on; do
      bin=$work/bin/instr$p env=()
      [ "$cfg" = plain ] && bin=$work/bin/plain$p
      [ "$cfg" = on ] && env=("$on_env")
      (cd "$pkgdir" && env "${env[@]}" "$bin" -test.run '^$' -test.bench "$bench" \
        -test.benchtime "${n}x" -test.count "$count" 2>/dev/null) |
        awk -v r="$r" -v p="$p" -v c="$cfg" '/^Benchmark.* ns\/op/ { print r, p, c, $1, $3 }' >>"$work/runs"
      rm -f "$work/traces"/*
    done
  done
  echo "round $r of $rounds done" >&2
done

echo "# $(date -u +%FT%TZ) $module $pkg, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) CPUs, $(go version | cut -d' ' -f3), $placements placements, $rounds rounds of ${n}x × $count, load average $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v np="$placements" '
  function median(list,   a, n, i, j, t) {
    n = split(list, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  {
    k = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4
    if (!(k in best) || $5 < best[k]) best[k] = $5
    if (!($4 in seen)) { seen[$4] = 1; names[++nb] = $4 }
  }
  END {
    for (k in best) { split(k, f, SUBSEP); v[f[2] SUBSEP f[3] SUBSEP f[4]] = v[f[2] SUBSEP f[3] SUBSEP f[4]] " " best[k] }
    for (b = 1; b <= nb; b++) {
      bn = names[b]
      printf "%s (ns/op, median over rounds of the fastest run)\n", bn
      printf "%-10s %10s %10s %10s %10s %10s\n", "placement", "plain", "off", "on", "off/plain", "on/plain"
      sp = so = sn = 0; lo = 1e18; hi = 0
      for (p = 0; p < np; p++) {
        pl = median(v[p SUBSEP "plain" SUBSEP bn]); of = median(v[p SUBSEP "off" SUBSEP bn]); on = median(v[p SUBSEP "on" SUBSEP bn])
        printf "%-10d %10.1f %10.1f %10.1f %10.3f %10.3f\n", p, pl, of, on, of / pl, on / pl
        sp += pl; so += of; sn += on
        if (pl < lo) lo = pl
        if (pl > hi) hi = pl
      }
      printf "%-10s %10.1f %10.1f %10.1f %10.3f %10.3f\n", "mean", sp / np, so / np, sn / np, so / sp, sn / sp
      printf "plain over placements: slowest / fastest %.3f\n\n", hi / lo
    }
  }' "$work/runs"
