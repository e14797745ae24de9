GO ?= go

# FUZZTIME is the budget of each fuzz target: a duration (30s, 1m) or a count (1000x).
FUZZTIME ?= 30s

# FUZZSPEED_TIME is how long `make fuzz-speed` fuzzes each decoder target and
# each run of the empty target around it.
FUZZSPEED_TIME ?= 10s

# staticcheck v0.8.2 is release 2026.2.2, the first series built for Go 1.26.
# The version is part of the install path, so bumping it installs the new one.
STATICCHECK_VERSION := v0.8.2
STATICCHECK_DIR := $(CURDIR)/bin/staticcheck-$(STATICCHECK_VERSION)
STATICCHECK := $(STATICCHECK_DIR)/staticcheck

# gremlins (go-gremlins/gremlins) makes the automated mutants of `make mutation`.
GREMLINS_VERSION := v0.6.0
GREMLINS_DIR := $(CURDIR)/bin/gremlins-$(GREMLINS_VERSION)
GREMLINS := $(GREMLINS_DIR)/gremlins

# SIM_SEEDS and SIM_HOURS are the sweep of `make sim`: that many seeds, from
# 1, each a node simulated for that many hours.
SIM_SEEDS ?= 20
SIM_HOURS ?= 24

# MUTATION_CHECKS is the rapid budget (cases per property) of every mutant's
# test run; the default 300 would make the run several times longer.
MUTATION_CHECKS ?= 50

# MUTANT_JOBS is how many mutants `make mutants` runs at once.
MUTANT_JOBS ?= $(shell nproc)

# BUSY_RUNS is how many times `make test-busy` runs `make test` in a row.
BUSY_RUNS ?= 5

.PHONY: test test-busy report fuzz fuzz-speed oss-fuzz mutants mutation bench lint clean conformance upstream-matrix containerd-pinned sim findings kubelet node-e2e

# The packages that run goroutines against real sockets run again under the
# race detector.
test:
	$(GO) vet ./...
	$(GO) test ./...
	$(GO) test -race ./agent/... ./integration/... ./linearizability/...

# make test, BUSY_RUNS times in a row with the test cache off, while
# 2 x nproc busy loops take the CPUs: a test that fails only because the
# machine is slow fails here. Each run's seconds are printed; the busy
# loops stop with the target, whether it passes or not.
test-busy:
	@n=$$((2 * $$(nproc))); pids=; \
	for i in $$(seq $$n); do yes >/dev/null & pids="$$pids $$!"; done; \
	trap 'kill $$pids 2>/dev/null' EXIT; trap 'exit 130' INT TERM; \
	echo "test-busy: $$n busy loops beside make test, $(BUSY_RUNS) runs"; \
	for r in $$(seq $(BUSY_RUNS)); do \
		start=$$(date +%s); \
		GOFLAGS=-count=1 $(MAKE) --no-print-directory test || { echo "test-busy: run $$r failed"; exit 1; }; \
		echo "test-busy: run $$r passed in $$(( $$(date +%s) - start )) s"; \
	done

# nodeproof report runs every suite, records and checks the linearizability
# histories (their visualizations land beside the report) and includes the
# results `make mutants` and `make conformance` leave in report/, saying
# which of those did not run.
report:
	$(GO) run ./cmd/nodeproof report --out report

# A sweep of whole-node simulations, a seed a core at once, printed in seed
# order; the summaries land in report/sim.json. A violation stops nothing:
# every seed runs, and the command exits 1 listing each failing seed with
# its replay line.
sim:
	mkdir -p report
	$(GO) run ./cmd/nodeproof sim --seeds 1..$(SIM_SEEDS) --hours $(SIM_HOURS) --jobs $(shell nproc) --json report/sim.json

# The known kubelet findings (docs/findings.md): each searched for from its
# own seed at the suites' default budget with its contract property
# enforced (the searches land in report/findings.json for the report), then
# each confirmed again on upstream's own code by its TestFinding test in the
# conformance module. It fails when a finding stops reproducing on either,
# or when a search fails on an invariant no finding explains.
findings:
	mkdir -p report
	$(GO) run ./cmd/nodeproof findings --json report/findings.json
	cd conformance && $(GO) test -count=1 -run '^TestFinding' ./...

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

# Each decoder fuzz target against the fuzzing engine's ceiling, an empty
# target of the same argument types, measured side by side in one run
# (docs/commands/fuzzspeed.md).
fuzz-speed:
	$(GO) run ./cmd/fuzzspeed --time $(FUZZSPEED_TIME)

# go-118-fuzz-build turns a native Go fuzz target into a libFuzzer archive,
# as OSS-Fuzz's compile_native_go_fuzzer runs it. This is the commit of its
# main branch the base-builder-go image builds; fuzz/oss-fuzz/build.sh and
# fuzz/oss-fuzz/check/go.mod pin the same (a test compares them).
GO118FUZZBUILD_VERSION := v0.0.0-20250520111509-a70c2aa677fa
GO118FUZZBUILD_DIR := $(CURDIR)/bin/go-118-fuzz-build-$(GO118FUZZBUILD_VERSION)
GO118FUZZBUILD := $(GO118FUZZBUILD_DIR)/go-118-fuzz-build

# The OSS-Fuzz build, here: fuzz/oss-fuzz/check (a module of its own, so the
# root's `go test ./...` never pays for it) runs the real build.sh on a
# scratch copy of the tree with a local compile_native_go_fuzzer, clang and
# Debian's libFuzzer, then runs every built target on its seed corpus and
# fuzzes it for a fixed number of runs. docs/fuzzing.md explains it.
oss-fuzz: $(GO118FUZZBUILD)
	cd fuzz/oss-fuzz/check && $(GO) vet ./... && \
		NODEPROOF_GO118FUZZBUILD=$(GO118FUZZBUILD) $(GO) test -count=1 -v -timeout 40m ./...

$(GO118FUZZBUILD):
	GOBIN=$(GO118FUZZBUILD_DIR) $(GO) install github.com/AdamKorcz/go-118-fuzz-build@$(GO118FUZZBUILD_VERSION)

# conformance/ is a module of its own (it requires k8s.io/kubernetes), so
# the root's `go test ./...` never builds it. Its JSON results feed
# `nodeproof report --conformance` and, for the plugin checker's runs
# against upstream's stub and sample device plugin, --plugin-check.
conformance:
	mkdir -p report
	cd conformance && $(GO) vet ./... && NODEPROOF_CONFORMANCE_JSON=$(CURDIR)/report/conformance.json \
		NODEPROOF_PLUGINCHECK_JSON=$(CURDIR)/report/plugincheck.json $(GO) test -count=1 ./...

# The conformance module built against each upstream release's own kubelet
# packages (conformance/releases/<v>.mod and a build tag; v1.36.3 is
# go.mod's) and its tests run: the release matrix of the confirmed findings
# and of the comparisons with nodeproof's core (docs/upstream.md). On
# v1.36.3 every test must pass, as under make conformance, whose result
# files it writes too. RELEASES is a comma-separated list, or all;
# UPSTREAM_CHECKS, when set, is the generated cases a comparison on the
# releases other than v1.36.3 (CI surveys v1.37.2 at 1,000; 0 is the
# module's 10,000).
RELEASES ?= all
UPSTREAM_CHECKS ?= 0
upstream-matrix:
	mkdir -p report
	cd conformance && $(GO) vet ./...
	$(GO) run ./cmd/nodeproof upstream --releases $(RELEASES) --checks $(UPSTREAM_CHECKS) --json report/upstream.json

# Debian's containerd 1.6 never sets CRI's pinned flag, so `make test`
# sees the sandbox image unprotected (#111796). containerd 1.7 pins it: this
# builds 1.7 from the Go module proxy (its go.mod has exclude directives, so
# `go install pkg@version` refuses it; a throwaway module builds it instead)
# and runs the containerd tests against it, where the pause image must be
# pinned and kept. Debian's shim, ctr and runc serve both.
CONTAINERD_PINNED_VERSION := v1.7.35
CONTAINERD_PINNED := $(CURDIR)/bin/containerd-$(CONTAINERD_PINNED_VERSION)/containerd

containerd-pinned: $(CONTAINERD_PINNED)
	@status=0; NODEPROOF_CONTAINERD=$(CONTAINERD_PINNED) $(GO) test -count=1 -v -run 'Containerd' ./integration/ ./cli/imagegc/ \
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

# The real kubelet (realkubelet, docs/realkubelet.md): the v1.36.3 binary,
# built from the module proxy in realkubelet/build (a module of its own, so
# the root's dependencies stay small) with its version stamped, cached in
# bin/. The first build compiles the kubelet and its dependencies (tens of
# minutes on a busy 2-core machine); later ones only relink.
KUBELET_VERSION := v1.36.3
KUBELET := $(CURDIR)/bin/kubelet-$(KUBELET_VERSION)

kubelet: $(KUBELET)

$(KUBELET):
	cd realkubelet/build && $(GO) build -ldflags "-X k8s.io/component-base/version.gitVersion=$(KUBELET_VERSION)" \
		-o $(KUBELET) k8s.io/kubernetes/cmd/kubelet

# The harness's tests against the real kubelet (root, Linux, cgroup v1),
# built only with the nodee2e tag: asked for, they run or fail (a host
# that cannot run a node fails them, naming why). A test that skipped
# fails the target too, so green means they ran. The generated scenarios
# (realkubelet/scenario) play a small sweep (NODEPROOF_SCENARIOS, 10 by
# default) from rapid's seed 1, as make mutants runs its properties, so that
# a red run names a case to replay; -p 1 because every node binds the same
# ports. Then nodeproof node plays seeds 1..10 and writes report/node.json,
# nodeproof report's "Real kubelet" section.
node-e2e: $(KUBELET)
	$(GO) vet -tags nodee2e ./realkubelet/... ./cli/node/
	@status=0; RAPID_SEED=1 $(GO) test -tags nodee2e -count=1 -v -p 1 -timeout 20m ./realkubelet/ ./realkubelet/scenario/ ./cli/node/ > bin/node-e2e.log 2>&1 || status=$$?; \
	grep -E '^(--- |ok|FAIL)|^ +(node_test|scenario_e2e_test).go|^ {8}' bin/node-e2e.log; \
	if [ $$status -ne 0 ]; then cat bin/node-e2e.log; exit $$status; fi; \
	if grep -q -- '--- SKIP' bin/node-e2e.log; then echo "node-e2e: a test skipped" >&2; exit 1; fi
	$(GO) run ./cmd/nodeproof node --seeds 1..10 --json report/node.json

# A kill needs a failure, not its smallest case: rapid's shrinking is cut to
# 5 s a run (from 30 s), which most suite-killed mutants used up whole.
# MUTANT_JOBS mutants run at once (one a core): the property suites are
# single-threaded, and mutants whose tests bound their calls' time or use
# the host's cgroups, sockets or runtime still run alone.
mutants:
	$(GO) run ./cmd/nodeproof mutants --shrink-time 5s --jobs $(MUTANT_JOBS) --json report/mutants.json

# gremlins mutates one directory and, with --integration, runs `go test ./...`
# of the whole module for each mutant: the only way it lets the property
# suites, which live outside core/, judge core's mutants. So it runs in a
# scratch module that holds just core/, the models and properties/ (and
# docs/, which properties' catalogue tests read), never the agent,
# integration or conformance tests. One run per directory of core/ (a
# directory's subpackages included), each with its own report, so a run cut
# short keeps what it finished; MUTATION_DIRS picks some.
#
# gremlins gives each mutant --timeout-coefficient times its coverage run, so
# that run must not come from the test cache (0.3 s, and every mutant would
# time out): the runs use a build cache of their own, warmed once, whose test
# results are cleared before each directory. -trimpath lets gremlins' copies
# of the module share that cache; the rapid settings fix the seed, keep fail
# files out of the copies and skip shrinking (a kill needs no minimal
# counterexample). docs/mutation.md explains the rest.
MUTATION_DIRS ?= $(patsubst core/%/,%,$(sort $(wildcard core/*/)))
MUTATION_ENV := GOCACHE=$(CURDIR)/bin/mutation-gocache GOFLAGS="-trimpath -vet=off" \
	RAPID_CHECKS=$(MUTATION_CHECKS) RAPID_SEED=1 RAPID_NOFAILFILE=true RAPID_SHRINKTIME=100ms
mutation: $(GREMLINS)
	@set -e; mkdir -p report/mutation; scratch=$$(mktemp -d); \
	trap 'rm -rf "$$scratch"' EXIT; trap 'exit 1' INT TERM; \
	git ls-files -co --exclude-standard -z -- go.mod go.sum core models properties docs | xargs -0 cp --parents -t "$$scratch"; \
	git ls-files -co --exclude-standard -z -- 'sim/*.go' ':!:sim/*_test.go' | xargs -0 cp --parents -t "$$scratch"; \
	cd "$$scratch"; \
	$(MUTATION_ENV) $(GO) test -count=1 -run '^$$' -cover -coverpkg ./core/... ./... > /dev/null; \
	$(MUTATION_ENV) $(GO) test -count=1 -run '^$$' ./... > /dev/null; \
	for dir in $(MUTATION_DIRS); do \
		start=$$(date +%s); \
		$(MUTATION_ENV) $(GO) clean -testcache; \
		$(MUTATION_ENV) $(GREMLINS) unleash --integration --coverpkg ./core/... --timeout-coefficient 10 \
			--output $(CURDIR)/report/mutation/$$dir.json "$$scratch/core/$$dir" > $(CURDIR)/report/mutation/$$dir.log 2>&1; \
		echo "core/$$dir: $$(( $$(date +%s) - start )) s, $$(sed -n 's/^Gathering coverage... //p' $(CURDIR)/report/mutation/$$dir.log) (log: report/mutation/$$dir.log)"; \
	done
	$(GO) run ./cmd/mutationscore --reports report/mutation --table docs/mutation.md

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

lint: $(STATICCHECK)
	$(GO) vet ./...
	$(STATICCHECK) ./...

$(GREMLINS):
	GOBIN=$(GREMLINS_DIR) $(GO) install github.com/go-gremlins/gremlins/cmd/gremlins@$(GREMLINS_VERSION)

$(STATICCHECK):
	GOBIN=$(STATICCHECK_DIR) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

clean:
	rm -rf report bin
