# ctrlkit: every check runs from here. `make test` is what CI runs.
GO            ?= go
GOLANGCI_LINT ?= github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0
BENCHSTAT     ?= golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
GOVULNCHECK   ?= golang.org/x/vuln/cmd/govulncheck@v1.9.0
# The Go vulnerability database, as the golang.org/x/vulndb module: the
# proxy serves it where vuln.go.dev can't be reached. Move it forward to
# see newer reports.
VULNDB        ?= golang.org/x/vulndb@v0.0.0-20261105234957-e22db6528018
APIDIFF       ?= golang.org/x/exp/cmd/apidiff@v0.0.0-20261113113407-e3970619a1a4
# Every Go module in the repository: the library, e2e, ctrlruntime and
# ctrlruntime/e2e (its suite against the real apiserver, a module of its own
# so that ctrlruntime's users never see the e2e module or k8s.io/kubernetes).
MODULES       := . $(patsubst %/go.mod,%,$(wildcard */go.mod */*/go.mod))
E2E_MODULES   := e2e ctrlruntime/e2e
# The modules that are released (tagged vX.Y.Z and ctrlruntime/vX.Y.Z).
RELEASED_MODULES := . ctrlruntime
# How `make test` builds its tests. go test's own vet pass is off:
# golangci-lint's govet has run all of its analyzers in `make lint`, and in
# a cold run that pass type-checks every dependency from source once more,
# for each module, version set and GOARCH, to compute its facts. Test
# binaries are linked without DWARF (-w), which no test reads (stack traces
# come from the pclntab): a third less time in each of the few hundred
# links a run makes.
TEST_FLAGS    ?= -vet=off -ldflags=-w
BENCH_COUNT   ?= 6
BENCH_TIME    ?= 500ms
BENCH_OUT     ?= $(CURDIR)/bench.out

.PHONY: test lint large-files fmt-check tidy-check golangci vulncheck apidiff unit unit-386 unit-386-qemu compat e2e bench

test: lint unit unit-386 compat e2e

lint: large-files fmt-check tidy-check golangci vulncheck apidiff

# No tracked file may be larger than MAX_FILE_BYTES: a built binary or a
# captured data set belongs in .gitignore, not in every clone's history.
# Sizes are those of the blobs in the index, so a file deleted from the work
# tree but still tracked counts.
MAX_FILE_BYTES ?= 1048576
large-files:
	@big=$$(git ls-files -s | sed 's/^[0-7]* \([0-9a-f]*\) [0-3]\t/\1 /' | \
	  git cat-file --batch-check='%(objectsize) %(rest)' | \
	  awk -v max=$(MAX_FILE_BYTES) '$$1 > max'); \
	if [ -n "$$big" ]; then echo "tracked files larger than $(MAX_FILE_BYTES) bytes (untrack them and add them to .gitignore):"; echo "$$big"; exit 1; fi

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# go.mod and go.sum must be exactly what `go mod tidy` makes, in every module.
tidy-check:
	@for m in $(MODULES); do \
	  (cd $$m && $(GO) mod tidy -diff) || { echo "go mod tidy would change $$m/go.mod or $$m/go.sum"; exit 1; }; \
	done

# golangci-lint (govet, staticcheck, errcheck, depguard, ...; see .golangci.yml),
# built once through the module proxy at the pinned version. A second run on
# the machine (another checkout) waits for the first instead of failing.
golangci:
	@for m in $(MODULES); do \
	  echo "golangci-lint: $$m"; \
	  (cd $$m && $(GO) run $(GOLANGCI_LINT) run --allow-serial-runners ./...) || exit 1; \
	done

# govulncheck on the released modules, against a database built from the
# VULNDB module (hack/vulndb; nothing but the module proxy is needed). A
# vulnerable function the code calls fails, unless
# hack/govulncheck-accepted.txt accepts its ID with a reason: the versions
# the go.mod floors hold, or the standard library of the Go running this.
vulncheck:
	@GO=$(GO) GOVULNCHECK=$(GOVULNCHECK) VULNDB=$(VULNDB) hack/vulncheck.sh $(RELEASED_MODULES)

# The exported API of the released modules against the last release tag
# (apidiff): an incompatible change fails unless CHANGELOG.md's Unreleased
# section lists it under "### Breaking" (before v1.0.0). Without a tag it
# passes.
apidiff:
	@GO=$(GO) APIDIFF=$(APIDIFF) hack/apidiff.sh $(RELEASED_MODULES)

# Race tests of every module but the e2e ones, whose suites talk HTTP to a
# real apiserver and run in `make e2e`.
unit:
	@for m in $(filter-out $(E2E_MODULES),$(MODULES)); do \
	  (cd $$m && $(GO) test $(TEST_FLAGS) -race -count=1 ./...) || exit 1; \
	done

# The library on 32-bit, where int is 32 bits wide. Where this kernel can't
# execute 386 binaries the tests are compiled and linked only, which still
# catches constant overflows and 64-bit-only code; `make unit-386-qemu` runs
# them under qemu-user instead.
unit-386:
	@tmp=$$(mktemp -d); printf 'package main\nfunc main() {}\n' > $$tmp/probe.go; \
	GOARCH=386 $(GO) build -o $$tmp/probe $$tmp/probe.go; \
	if $$tmp/probe 2>/dev/null; then exec=""; \
	else echo "unit-386: this kernel runs no 386 binaries: compiling and linking the tests only (see make unit-386-qemu)"; exec="-exec true"; fi; \
	rm -rf $$tmp; \
	GOARCH=386 $(GO) test $(TEST_FLAGS) -count=1 $$exec ./...

# The library's 386 tests under qemu-user (Debian's qemu-user), with
# asynchronous preemption off: qemu delivers the runtime's preemption
# signals on the wrong stack ("morestack on gsignal"). Even so qemu now and
# then crashes the Go runtime in its signal handling, so this is not part
# of `make test`. The tests that start their own binary again (the re-runs
# on trimmed pods) can't do so under qemu and are left out.
unit-386-qemu:
	GODEBUG=asyncpreemptoff=1 GOARCH=386 $(GO) test -count=1 -exec qemu-i386 -skip '^TestControllerOnTrimmedPods$$' ./...

# The library's unit tests against the newest patch of every supported
# Kubernetes minor, and ctrlruntime's against the newest patch of every
# supported controller-runtime minor, each with the Kubernetes minor it was
# released for at the patch COMPAT_K8S names (CR_VERSION/K8S_VERSION): an
# importer on that line has both, and the Kubernetes libraries compiled for
# the library's run serve ctrlruntime's too, instead of being compiled a
# second time. The floors themselves are what go.mod names, which `make
# unit` tests. hack/compat.sh works on a copy of go.mod; the tracked one
# never changes. Without -count=1 a run whose sources and versions are
# unchanged is answered from go test's cache; COMPAT_TEST_FLAGS=-count=1
# reruns all.
COMPAT_K8S ?= v0.34.13 v0.35.10 v0.36.6 v0.37.2
COMPAT_CR  ?= v0.22.5/v0.34.13 v0.23.3/v0.35.10 v0.24.1/v0.36.6 v0.25.2/v0.37.2
k8s-libs    = k8s.io/api@$(1) k8s.io/apimachinery@$(1) k8s.io/client-go@$(1)
compat:
	@start=$$(date +%s); \
	GO=$(GO) COMPAT_TEST_FLAGS="$(TEST_FLAGS) $(COMPAT_TEST_FLAGS)" hack/compat.sh . \
	  $(foreach v,$(COMPAT_K8S),'$(call k8s-libs,$(v))') && \
	GO=$(GO) COMPAT_TEST_FLAGS="$(TEST_FLAGS) $(COMPAT_TEST_FLAGS)" hack/compat.sh ctrlruntime \
	  $(foreach p,$(COMPAT_CR),'sigs.k8s.io/controller-runtime@$(word 1,$(subst /, ,$(p))) $(call k8s-libs,$(word 2,$(subst /, ,$(p))))') && \
	echo "compat: passed in $$(( $$(date +%s) - start )) s"

e2e:
	cd e2e && $(GO) test $(TEST_FLAGS) -count=1 -timeout 60m ./...
	cd ctrlruntime/e2e && $(GO) test $(TEST_FLAGS) -race -count=1 -timeout 30m ./...

# Each round runs every benchmark once, so both halves of a pair (sub-benchmarks
# named .../impl=ctrlkit and .../impl=upstream, impl=clientgo or
# impl=goroutinepercall) run back to back under the same machine load, ctrlkit
# first in odd rounds and second in even ones (CTRLKIT_BENCH_ROUND, read by
# internal/benchpair); benchstat then takes the medians over the rounds and
# prints one table with the ratio of every pair.
#
# The shapes users run come first: the rollout shape (a scale-down ranked
# among a sibling ReplicaSet's pods) and the event storm (both controllers
# running under an update of every owner), against upstream.
#
# The library's benchmarks go to $(BENCH_OUT).lib and get tables of their
# own, with ctrlkit, first in round 1, as the base column. The e2e pairs
# against upstream are printed with upstream as the base column, and the
# slow-start pairs with goroutine-per-call as the base.
bench:
	@rm -f $(BENCH_OUT) $(BENCH_OUT).lib
	@for i in $$(seq $(BENCH_COUNT)); do \
	  echo "bench round $$i/$(BENCH_COUNT)" >&2; \
	  CTRLKIT_BENCH_ROUND=$$i $(GO) test -run '^$$' -bench . -benchmem -count 1 -benchtime $(BENCH_TIME) ./... >> $(BENCH_OUT).lib || exit 1; \
	  (cd e2e && CTRLKIT_BENCH_ROUND=$$i $(GO) test -run '^$$' -bench . -benchmem -count 1 -benchtime $(BENCH_TIME) ./parity/) >> $(BENCH_OUT) || exit 1; \
	  (cd e2e && CTRLKIT_BENCH_ROUND=$$i $(GO) test -run '^$$' -bench . -count 1 -benchtime 1x -timeout 60m ./parity/scaleup/) >> $(BENCH_OUT) || exit 1; \
	done
	$(GO) run $(BENCHSTAT) -filter ".name:(RolloutShape OR EventStorm)" -col "/impl@(upstream ctrlkit)" $(BENCH_OUT)
	$(GO) run $(BENCHSTAT) -col /impl $(BENCH_OUT).lib
	$(GO) run $(BENCHSTAT) -filter ".name:Reconcile10k" -col "/op@(naive steady scaledown)" $(BENCH_OUT).lib
	$(GO) run $(BENCHSTAT) -col "/impl@(upstream ctrlkit)" $(BENCH_OUT)
	$(GO) run $(BENCHSTAT) -filter ".name:SlowStart" -col "/impl@(goroutinepercall ctrlkit)" $(BENCH_OUT)
