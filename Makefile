# goxray: make test (what CI runs), make demo, make bench, make lint.
GO ?= go
STATICCHECK_VERSION ?= v0.8.2
GOBIN := $(shell $(GO) env GOPATH)/bin
# Time per fuzz target in make test (scripts/fuzz.sh); FUZZTIME=2m for a longer run.
FUZZTIME ?= 15s

.PHONY: test demo bench lint vet staticcheck race interop19

# test: lint, then every test under the race detector against llvm-xray
# (LLVM_XRAY, default llvm-xray), the whole suite again against
# llvm-xray-19 when it is installed, cross-builds, the clock paths this
# CPU does not take under qemu-user (scripts/test-emulated.sh: arm64, an
# amd64 without RDTSCP or invariant TSC, one with RDTSCP), and every fuzz
# target for FUZZTIME (a crasher is kept in testdata/fuzz and fails the run).
test: lint
	@scripts/need-llvm-xray.sh >/dev/null
	$(GO) test -race -count=1 ./...
	@if command -v llvm-xray-19 >/dev/null 2>&1; then \
		echo "LLVM_XRAY=llvm-xray-19 $(GO) test -count=1 ./..."; \
		LLVM_XRAY=llvm-xray-19 $(GO) test -count=1 ./...; \
	else echo "note: llvm-xray-19 not installed (apt-get install -y llvm-19); interop ran against llvm-xray only"; fi
	GOARCH=arm64 $(GO) build ./...
	GOARCH=386 $(GO) build ./...
	GO=$(GO) scripts/test-emulated.sh
	FUZZTIME=$(FUZZTIME) scripts/fuzz.sh

demo:
	@scripts/demo.sh

bench:
	@scripts/bench.sh

lint: vet staticcheck
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	GOARCH=arm64 $(GO) vet ./...

staticcheck:
	@test -x $(GOBIN)/staticcheck || $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	$(GOBIN)/staticcheck ./...
