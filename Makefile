# goxray: make test (what CI runs), make demo, make docs, make bench, make lint.
GO ?= go
STATICCHECK_VERSION ?= v0.8.2
GOBIN := $(shell $(GO) env GOPATH)/bin
# Time per fuzz target in make test (scripts/fuzz.sh); FUZZTIME=2m for a longer run.
FUZZTIME ?= 15s

.PHONY: test demo demo-otel docs bench lint vet staticcheck race interop19 realmod soak

# test: lint, then every test under the race detector against llvm-xray
# (LLVM_XRAY, default llvm-xray), the whole suite again with -tags purego
# and against llvm-xray-19, the API, runtime, asm, fdr and instrumentation
# suites on the other supported Go release (GO_NEXT, fetched by the go
# command), cross-builds, the clock paths this CPU does not take under
# qemu-user (scripts/test-emulated.sh: arm64, an amd64 without RDTSCP or
# invariant TSC, one with RDTSCP), the xrayotel module against a real
# Jaeger (built once by scripts/build-jaeger.sh into a cache outside the
# clone, about 150 s cold), goxray stack's output read by speedscope
# (installed from the npm registry by scripts/install-speedscope.sh into a
# cache outside the clone), and every fuzz target for FUZZTIME (a crasher
# is kept in testdata/fuzz and fails the run).
# Each configuration runs through scripts/gotest.sh, which records every
# test's outcome; at the end a test skipped in every configuration fails
# the run unless .ci/skip-ledger.txt lists it with its reason (or, for a
# test only a CPU feature runs, with the feature, which the check looks
# up in this machine's CPUID).
# GOXRAY_REQUIRE_TOOLS=1: a missing llvm-xray (or qemu, or npm) fails the tests
# here instead of skipping them as a plain `go test ./...` does.
GO_NEXT ?= go1.27.3
test: export GOXRAY_REQUIRE_TOOLS := 1
test: export GO := $(GO)
test: lint
	@scripts/need-llvm-xray.sh >/dev/null
	@command -v llvm-xray-19 >/dev/null 2>&1 || { echo "error: llvm-xray-19 is missing; install it with: apt-get install -y llvm-19" >&2; exit 1; }
	@GOTOOLCHAIN=$(GO_NEXT) $(GO) version >/dev/null || { echo "error: Go $(GO_NEXT) is not available; fetch it with: GOTOOLCHAIN=$(GO_NEXT) go version" >&2; exit 1; }
	@rm -rf out/testledger
	scripts/gotest.sh race -race -count=1 -timeout 25m ./...
	scripts/gotest.sh purego -tags purego -count=1 -timeout 30m ./...
	LLVM_XRAY=llvm-xray-19 scripts/gotest.sh llvm-xray-19 -count=1 -timeout 30m ./...
	GOTOOLCHAIN=$(GO_NEXT) scripts/gotest.sh $(GO_NEXT) -count=1 -timeout 30m . ./export ./internal/stream ./internal/settings ./internal/request ./internal/engine ./internal/buffer ./internal/flush ./internal/glayout ./internal/gotrace ./internal/instrmap ./internal/registry ./internal/tsc ./internal/asm ./fdr/... ./internal/instrument/... ./internal/overlaybuild ./internal/why ./cmd/goxray
	GOARCH=arm64 $(GO) build ./...
	GOARCH=386 $(GO) build ./...
	cd xrayotel && $(GO) vet ./... && $(GOBIN)/staticcheck ./...
	scripts/gotest.sh bench -C bench -race -count=1 -timeout 10m ./...
	GOXRAY_JAEGER=$$(scripts/build-jaeger.sh) scripts/gotest.sh xrayotel -C xrayotel -race -count=1 -timeout 10m ./...
	scripts/test-emulated.sh
	out/testledger/testledger check -ledger .ci/skip-ledger.txt out/testledger/*.jsonl
	FUZZTIME=$(FUZZTIME) scripts/fuzz.sh

# soak: minutes of randomized workloads (not in CI): concurrent flushes,
# HTTP downloads, GOMAXPROCS changes and Start/Stop, every file verified
# for holes and false nesting (our reader; one in four through llvm-xray).
# SOAK=10m runs longer.
SOAK ?= 3m
soak:
	@scripts/need-llvm-xray.sh >/dev/null
	XRAY_SOAK=$(SOAK) $(GO) test -tags soak -run '^TestSoak$$' -count=1 -timeout 0 -v .

# demo: trace cmd/xraydemo, flush it with SIGUSR1, read the trace with
# llvm-xray and goxray (account, top -lineage, flame, pprof, perfetto), then
# the same service built by `goxray build` and traced by XRAY_OPTIONS alone.
# Everything goes to out/demo (ignored by git); the clone stays clean.
demo:
	@scripts/demo.sh

# demo-otel: one request across three services (gateway → api over HTTP
# → store over gRPC), each built with goxray build and exporting through
# xrayotel to Jaeger v2 with tail sampling: the slow request's tree as
# Jaeger's API returns it (scripts/demo-otel.sh).
demo-otel:
	@GO=$(GO) scripts/demo-otel.sh

# docs: run the demo (Chromium required), then refresh the tracked
# docs/flame.{svg,png}, docs/pprof.png, the transcript in docs/demo.md and
# the README's excerpt of it.
docs:
	@scripts/demo.sh --docs

bench:
	@scripts/bench.sh

# realmod: the test suites of real modules (go-cmp, BurntSushi/toml), fetched
# through the module proxy, pass under `goxray test` with every function
# instrumented, and each trace loads in llvm-xray 14 and 19 with names
# (about 1 minute on 2 cores).
realmod:
	@scripts/need-llvm-xray.sh >/dev/null
	GOXRAY_REALMOD=1 $(GO) test -count=1 -run TestRealModules -v ./cmd/goxray

lint: vet staticcheck
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# bench is a module of its own (its peers' dependencies stay out of the
# library's go.mod); lint covers it too.
vet:
	$(GO) vet ./...
	GOARCH=arm64 $(GO) vet ./...
	cd bench && $(GO) vet ./... && GOARCH=arm64 $(GO) vet ./...

staticcheck:
	@test -x $(GOBIN)/staticcheck || $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	$(GOBIN)/staticcheck ./...
	cd bench && $(GOBIN)/staticcheck ./...
