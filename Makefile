GO ?= go

# FUZZTIME is the budget of each fuzz target: a duration (30s, 1m) or a count (1000x).
FUZZTIME ?= 30s

# staticcheck v0.8.2 is release 2026.2.2, the first series built for Go 1.26.
# The version is part of the install path, so bumping it installs the new one.
STATICCHECK_VERSION := v0.8.2
STATICCHECK_DIR := $(CURDIR)/bin/staticcheck-$(STATICCHECK_VERSION)
STATICCHECK := $(STATICCHECK_DIR)/staticcheck

.PHONY: test report fuzz mutants bench lint clean conformance containerd-pinned

# The packages that run goroutines against real sockets run again under the
# race detector.
test:
	$(GO) vet ./...
	$(GO) test ./...
	$(GO) test -race ./agent/... ./integration/... ./linearizability/...

# nodeproof report runs every suite, records and checks the linearizability
# histories (their visualizations land beside the report) and includes the
# results `make mutants` and `make conformance` leave in report/, saying
# which of those did not run.
report:
	$(GO) run ./cmd/nodeproof report --out report

# Go fuzzes one target per invocation. One `go test -list` over the module
# names each package's targets (the names, then that package's "ok" line),
# so a new Fuzz function joins without editing this file.
fuzz:
	@set -e; \
	listing=$$($(GO) test -list '^Fuzz' ./...); \
	targets=$$(printf '%s\n' "$$listing" | awk '/^Fuzz/ { t[n++] = $$1; next } /^ok/ { for (i = 0; i < n; i++) print $$2, t[i]; n = 0 }'); \
	if [ -z "$$targets" ]; then echo "fuzz: no fuzz targets found"; exit 0; fi; \
	printf '%s\n' "$$targets" | while read -r pkg target; do \
		echo "==> $$target in $$pkg for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) "$$pkg" || exit 1; \
	done

# conformance/ is a module of its own (it requires k8s.io/kubernetes), so
# the root's `go test ./...` never builds it. Its JSON result feeds
# `nodeproof report --conformance`.
conformance:
	mkdir -p report
	cd conformance && $(GO) vet ./... && NODEPROOF_CONFORMANCE_JSON=$(CURDIR)/report/conformance.json $(GO) test -count=1 ./...

# Debian's containerd 1.6 never sets CRI's pinned flag, so `make test`
# sees the sandbox image unprotected (#111796). containerd 1.7 pins it: this
# builds 1.7 from the Go module proxy (its go.mod has exclude directives, so
# `go install pkg@version` refuses it; a throwaway module builds it instead)
# and runs the containerd tests against it, where the pause image must be
# pinned and kept. Debian's shim, ctr and runc serve both.
CONTAINERD_PINNED_VERSION := v1.7.35
CONTAINERD_PINNED := $(CURDIR)/bin/containerd-$(CONTAINERD_PINNED_VERSION)/containerd

containerd-pinned: $(CONTAINERD_PINNED)
	@status=0; NODEPROOF_CONTAINERD=$(CONTAINERD_PINNED) $(GO) test -count=1 -v -run 'Containerd' ./integration/ ./cmd/nodeproof/ \
		> bin/containerd-pinned.log 2>&1 || status=$$?; \
	grep -E '^(--- |ok|FAIL)|pinned' bin/containerd-pinned.log; \
	if [ $$status -ne 0 ]; then cat bin/containerd-pinned.log; exit $$status; fi; \
	if grep -q -- '--- SKIP' bin/containerd-pinned.log; then echo "containerd-pinned: a test skipped" >&2; exit 1; fi; \
	grep -q 'sandbox image pinned: true' bin/containerd-pinned.log || { echo "containerd-pinned: no test saw a pinned sandbox image" >&2; exit 1; }

$(CONTAINERD_PINNED):
	set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; cd "$$tmp"; \
	printf 'module containerdbuild\n\ngo 1.26\n' > go.mod; \
	printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/containerd/containerd/cmd/containerd"\n' > tools.go; \
	$(GO) get github.com/containerd/containerd@$(CONTAINERD_PINNED_VERSION); \
	$(GO) mod tidy; \
	CGO_ENABLED=0 $(GO) build -tags no_btrfs,no_devmapper,no_zfs,no_aufs -o $(CONTAINERD_PINNED) github.com/containerd/containerd/cmd/containerd

mutants:
	$(GO) run ./cmd/nodeproof mutants --json report/mutants.json

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

lint: $(STATICCHECK)
	$(GO) vet ./...
	$(STATICCHECK) ./...

$(STATICCHECK):
	GOBIN=$(STATICCHECK_DIR) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

clean:
	rm -rf report bin
