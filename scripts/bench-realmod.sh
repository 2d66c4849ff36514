#!/usr/bin/env bash
# The real-module rows of make bench: the cost of automatic instrumentation
# on code nobody here wrote. For each module of bench/realmod/modules.txt
# (fetched through the module proxy at its pinned version) it builds every
# package's test binary twice, plain (go test -c) and instrumented at the
# default settings (goxray test -c), and runs the module's own benchmarks
# in ROUNDS rounds; each round runs every package's benchmarks plain,
# instrumented with tracing off, instrumented with tracing on
# (XRAY_OPTIONS, every other setting the runtime's default), on with Go's
# execution trace beside it (on+gotrace: the same XRAY_OPTIONS plus
# XRAY_FDR_OPTIONS=go_trace=true, what goxray why reads), and plain again
# (the A/A ratio: what noise alone makes), in an order that rotates from
# round to round. Then an Echo server
# (github.com/labstack/echo/v4, pinned below) built plain and instrumented
# (-xray.pkgs=echo, from a local copy) answers a bounded loopback load (bench/realmod/load:
# at most REQUESTS requests, at most 60 s, 127.0.0.1 only) in each of the
# five configurations, and one more traced run checks that its flushed
# trace counts one call of echo's request handler per request served.
#
# It prints benchstat's comparison per module and bench/realmod/table's
# summary: benchmarks, off/plain, on/plain, gotrace/plain and plain/plain
# geomeans of the
# per-benchmark median ratios, the budget in force and the functions shed while traced
# (as the runtime's log lines report them; n/a when it reports none).
#
# MODULES names another module list (MODULES=/dev/null: the server only).
# QUICK=1 (or ROUNDS, BENCHTIME, REQUESTS) makes it short: 2 rounds of
# 20 ms benchmarks and 3000 requests instead of 5 rounds of 200 ms and
# 30000. Results land in bin/realmod/.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
if [ -n "${QUICK:-}" ]; then
  rounds=${ROUNDS:-2} benchtime=${BENCHTIME:-20ms} requests=${REQUESTS:-3000}
else
  rounds=${ROUNDS:-5} benchtime=${BENCHTIME:-200ms} requests=${REQUESTS:-30000}
fi
echo_version=github.com/labstack/echo/v4@v4.16.0
work=$root/bin/realmod
rm -rf "$work" && mkdir -p "$work"
go build -o "$work/goxray" ./cmd/goxray
go build -C bench -o "$work/load" ./realmod/load
export GOXRAY_REPLACE=$root
unset XRAY_OPTIONS XRAY_FDR_OPTIONS
traces=$work/traces
mkdir -p "$traces"
on_env=("XRAY_OPTIONS=patch_premain=true xray_mode=xray-fdr xray_logfile_base=$traces/")
gotrace_env=("${on_env[@]}" "XRAY_FDR_OPTIONS=go_trace=true")

# fetch MODULE@VERSION DIR: a writable copy of the module's source.
fetch() {
  local dir
  dir=$(go mod download -json "$1" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] || { echo "error: go mod download $1 failed" >&2; exit 1; }
  cp -r "$dir" "$2"
  chmod -R u+w "$2"
}

# run CFG BIN: one benchmark run of a test binary in its package's
# directory, appended to CFG's results (stderr to CFG.err).
run() {
  local cfg=$1 bin=$2 pkgdir=$3 out=$4
  local env=()
  case "$cfg" in
  on) env=("${on_env[@]}") ;;
  gotrace) env=("${gotrace_env[@]}") ;;
  esac
  (cd "$pkgdir" && env "${env[@]}" "$bin" -test.run '^$' -test.bench . -test.benchtime "$benchtime" -test.count 1 -test.benchmem \
    >>"$out/$cfg.txt" 2>>"$out/$cfg.err") || echo "warning: $cfg run of $bin failed (see $out/$cfg.err)" >&2
  rm -f "$traces"/*
}

# plain2 runs the plain binary again: the plain / plain ratio (A/A) shows
# how much of a ratio the machine's noise alone makes.
configs=(plain off on gotrace plain2)
nconfigs=${#configs[@]}
while read -r mv skip; do
  case "$mv" in ''|'#'*) continue ;; esac
  name=$(echo "$mv" | tr '/@' '__')
  out=$work/$name
  mkdir -p "$out/bin"
  fetch "$mv" "$out/src"
  echo "$skip" >"$out/skip"
  echo "== $mv: building test binaries" >&2
  pkgs=()
  while read -r ip dir; do
    grep -qs '^func Benchmark' "$dir"/*_test.go || continue
    b=$(echo "$ip" | tr '/.' '__')
    (cd "$out/src" && go test -c -o "$out/bin/$b.plain" "$ip" && "$work/goxray" test -c -o "$out/bin/$b.instr" "$ip") >&2
    pkgs+=("$b $dir")
  done < <(cd "$out/src" && go list -f '{{.ImportPath}} {{.Dir}}' ./...)
  for r in $(seq "$rounds"); do
    echo "== $mv: round $r of $rounds" >&2
    for p in "${pkgs[@]}"; do
      read -r b dir <<<"$p"
      for i in $(seq 0 $((nconfigs - 1))); do
        cfg=${configs[$(((i + r) % nconfigs))]}
        bin=$out/bin/$b.instr
        case "$cfg" in plain*) bin=$out/bin/$b.plain ;; esac
        run "$cfg" "$bin" "$dir" "$out"
      done
    done
  done
done <"${MODULES:-bench/realmod/modules.txt}"

# The server: every configuration, REQUESTS requests each, interleaved.
srv=$work/server
mkdir -p "$srv"
cp bench/realmod/server/main.go "$srv/main.go"
sed -i '/^\/\/go:build ignore$/,+1d' "$srv/main.go"
# The go command takes no overlay of module-cache files: echo is replaced
# by a local copy, which -xray.pkgs can instrument.
fetch "$echo_version" "$srv/echo"
(cd "$srv" && printf 'module example.com/realmod/server\n\ngo 1.26.0\n' >go.mod &&
  go mod edit -require="$echo_version" -replace="${echo_version%@*}=./echo" && go mod tidy >/dev/null 2>&1 &&
  go build -o plain . && "$work/goxray" build -xray.pkgs=github.com/labstack/echo/v4/... -o instr .) >&2

# serve CFG [ENV...]: start the server, load it, stop it; appends "CFG rps"
# to server.txt and leaves its stdout in serve.out.
serve() {
  local cfg=$1
  shift
  local bin=$srv/instr
  case "$cfg" in plain*) bin=$srv/plain ;; esac
  # Emptied here, not by the server's redirection, which happens in the
  # child after the fork: the loop below would read the previous run's
  # LISTEN line and load a server that is gone.
  : >"$srv/serve.out"
  env "$@" "$bin" >>"$srv/serve.out" 2>>"$srv/$cfg.err" &
  local pid=$! addr=""
  for _ in $(seq 100); do
    addr=$(sed -n 's/^LISTEN //p' "$srv/serve.out")
    [ -n "$addr" ] && break
    sleep 0.1
  done
  [ -n "$addr" ] || { echo "error: the $cfg server did not start" >&2; kill "$pid"; exit 1; }
  # load exits 1 when a request failed: a warm-up's failure is reported,
  # and a measured run with failures is left out of server.txt.
  "$work/load" -addr "$addr" -n 200 -c 4 -d 10s >/dev/null || echo "warning: the $cfg warm-up had failed requests" >&2
  local res ok=1
  res=$("$work/load" -addr "$addr" -n "$requests" -c 4 -d 60s) || ok=0
  kill -TERM "$pid"
  wait "$pid" || true
  if [ "$ok" = 1 ]; then
    echo "$cfg $(echo "$res" | sed -n 's/.* RPS \([0-9.]*\)$/\1/p') $res" >>"$srv/server.txt"
  else
    echo "warning: the $cfg run had failed requests, left out: $res" >&2
  fi
}
for r in $(seq "$rounds"); do
  for i in $(seq 0 $((nconfigs - 1))); do
    cfg=${configs[$(((i + r) % nconfigs))]}
    case "$cfg" in
    on) serve on "${on_env[@]}" ;;
    gotrace) serve gotrace "${gotrace_env[@]}" ;;
    *) serve "$cfg" ;;
    esac
    rm -f "$traces"/*
  done
done
# The check: one traced run with room for every record (buffer_max), so
# that the window holds every request.
touch "$srv/server.txt"
measured=$(wc -l <"$srv/server.txt")
serve on "${on_env[@]}" "XRAY_FDR_OPTIONS=buffer_max=2048"
served=$(sed -n 's/^SERVED //p' "$srv/serve.out")
trace=$(ls "$traces"/* | grep -v '\.map$' | head -1)
handler='github.com/labstack/echo/v4.(*Echo).ServeHTTP'
xraybin=$(command -v llvm-xray || command -v llvm-xray-19)
calls=$("$xraybin" account -instr_map="$trace.map" "$trace" 2>/dev/null | awk -v h=": $handler" 'index($0, h) && substr($0, length($0) - length(h) + 1) == h { print $2 }')
echo "server trace check: $handler: ${calls:-none} calls in the trace, $served requests served" >"$srv/check.txt"
sed -i "$((measured + 1)),\$d" "$srv/server.txt" # the check run's rate is not a measurement

for d in "$work"/*/; do
  [ -f "$d/plain.txt" ] || continue
  echo "== $(basename "$d")"
  # Per benchmark: bin/realmod/*/benchstat.txt; here the time geomeans.
  (cd "$d" && go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da plain.txt off.txt on.txt gotrace.txt plain2.txt >benchstat.txt 2>&1 &&
    grep -m3 -E 'plain.txt|sec/op|geomean' benchstat.txt) || true
done
echo
echo "# $(date -u +%FT%TZ) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) CPUs, $(go version | cut -d' ' -f3), $rounds rounds of $benchtime, $requests requests"
go run -C bench ./realmod/table "$work"
