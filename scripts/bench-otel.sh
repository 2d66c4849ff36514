#!/usr/bin/env bash
# bench-otel: what xrayotel's processor costs a service with slow requests.
# xrayotel/internal/slowsvc (a net/http service on loopback, a server
# span and a client span per request through the OpenTelemetry SDK with a
# batcher, three functions under Enter/Exit, one request in 500 sleeping
# 35 ms, 4 keep-alive connections) runs in interleaved rounds (ROUNDS,
# default 8, of D, default 5s, each run), each round running every mode
# once: OpenTelemetry alone (otel), OpenTelemetry alone with goxray
# recording (rec), goxray and the processor beside the batcher (xray), the
# processor in front of the batcher holding each request's spans until it
# ends (hold, Options.Next), and OpenTelemetry alone again (otel-aa: the
# A/A, what the noise alone makes of a ratio), so that a noisy spell on a
# shared machine lands in every mode. It prints every run and, for each
# mode, the ratios of the medians to otel's and to rec's: of the request
# rates, and of the CPU time per request (what the rate would be on a
# machine of its own; on a shared one the rate swings with the
# neighbours' load, the CPU per request much less). rec is the baseline
# that isolates the processor: goxray's buffers are live heap, which on a
# service with a heap this small makes the collector run less often
# (GCS, the collections in the measured time), and that saving is
# goxray's, not the processor's.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-8}
d=${D:-5s}
mkdir -p bin
go build -C xrayotel -o ../bin/slowsvc ./internal/slowsvc
out=bin/bench-otel.txt
: > "$out"
for r in $(seq "$rounds"); do
  for mode in otel rec xray hold otel-aa; do
    bin/slowsvc -mode "${mode%-aa}" -label "$mode" -d "$d" "$@" | tee -a "$out"
  done
done
awk '$1 == "MODE" { rps[$2] = rps[$2] " " $4; cpu[$2] = cpu[$2] " " $10; gcs[$2] = gcs[$2] " " $12 }
function median(s,   a, n, i, j, t) {
  n = split(s, a, " ")
  for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
  return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
END {
  o = median(rps["otel"]); oc = median(cpu["otel"])
  r = median(rps["rec"]); rc = median(cpu["rec"])
  printf "medians: req/s, CPU per request (server and load generator), collections in the measured time;\n"
  printf "ratios against OpenTelemetry alone (otel) and against it with goxray recording (rec):\n"
  split("otel otel-aa rec xray hold", modes, " ")
  for (i = 1; i <= 5; i++) {
    m = modes[i]; x = median(rps[m]); xc = median(cpu[m])
    printf "  %-8s %7.0f req/s %7.2f µs %5.0f GCs   otel: %.3f × rate, %.3f × rate at equal CPU   rec: %.3f ×, %.3f ×\n", m, x, xc, median(gcs[m]), x / o, oc / xc, x / r, rc / xc
  }
}' "$out"
