#!/usr/bin/env bash
# bench-otel: what xrayotel's processor costs a service with slow requests.
# xrayotel/internal/slowsvc (a net/http service on loopback, a server
# span and a client span per request through the OpenTelemetry SDK with a
# batcher, three functions under Enter/Exit, one request in 500 sleeping
# 35 ms, 4 keep-alive connections) runs in interleaved rounds (ROUNDS,
# default 8, of D, default 5s, each run), each round running every mode
# once: OpenTelemetry alone (otel), goxray and the processor beside the
# batcher (xray), the processor in front of the batcher holding each
# request's spans until it ends (hold, Options.Next), and OpenTelemetry
# alone again (otel-aa: the A/A, what the noise alone makes of a ratio),
# so that a noisy spell on a shared machine lands in every mode. It prints
# every run and, for each mode, the ratios of the medians to otel's: of
# the request rates, and of the CPU time per request (what the rate would
# be on a machine of its own; on a shared one the rate swings with the
# neighbours' load, the CPU per request much less).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-8}
d=${D:-5s}
mkdir -p bin
go build -C xrayotel -o ../bin/slowsvc ./internal/slowsvc
out=bin/bench-otel.txt
: > "$out"
for r in $(seq "$rounds"); do
  for mode in otel xray hold otel-aa; do
    bin/slowsvc -mode "${mode%-aa}" -label "$mode" -d "$d" "$@" | tee -a "$out"
  done
done
awk '$1 == "MODE" { rps[$2] = rps[$2] " " $4; cpu[$2] = cpu[$2] " " $10 }
function median(s,   a, n, i, j, t) {
  n = split(s, a, " ")
  for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
  return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
END {
  o = median(rps["otel"]); oc = median(cpu["otel"])
  printf "median req/s and CPU per request (server and load generator), against OpenTelemetry alone (otel: %.0f req/s, %.2f µs):\n", o, oc
  split("otel-aa xray hold", modes, " ")
  for (i = 1; i <= 3; i++) {
    m = modes[i]; x = median(rps[m]); xc = median(cpu[m])
    printf "  %-8s %7.0f req/s: %.3f ×   %7.2f µs: throughput at equal CPU %.3f ×\n", m, x, x / o, xc, oc / xc
  }
}' "$out"
