# ctrlkit: every check runs from here. `make test` is what CI runs.
GO            ?= go
STATICCHECK   ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
PKGS          := ./...
BENCH_COUNT   ?= 5
BENCH_TIME    ?= 500ms
BENCH_OUT     ?= $(CURDIR)/bench.out

.PHONY: test lint fmt-check vet staticcheck unit e2e bench

test: lint unit e2e

lint: fmt-check vet staticcheck

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)
	cd e2e && $(GO) vet ./...

staticcheck:
	$(GO) run $(STATICCHECK) $(PKGS)
	cd e2e && $(GO) run $(STATICCHECK) ./...

unit:
	$(GO) test -race -count=1 $(PKGS)

e2e:
	cd e2e && $(GO) test -count=1 -timeout 60m ./...

# Each round runs every benchmark once, so the ctrlkit and baseline halves of a
# pair run back to back under the same machine load; benchtable then takes the
# median of the rounds and prints the ratio.
bench:
	@rm -f $(BENCH_OUT)
	@for i in $$(seq $(BENCH_COUNT)); do \
	  echo "bench round $$i/$(BENCH_COUNT)" >&2; \
	  $(GO) test -run '^$$' -bench . -benchmem -count 1 -benchtime $(BENCH_TIME) $(PKGS) >> $(BENCH_OUT) || exit 1; \
	  (cd e2e && $(GO) test -run '^$$' -bench . -benchmem -count 1 -benchtime $(BENCH_TIME) ./parity/) >> $(BENCH_OUT) || exit 1; \
	  (cd e2e && $(GO) test -run '^$$' -bench . -count 1 -benchtime 1x -timeout 60m ./parity/scaleup/) >> $(BENCH_OUT) || exit 1; \
	done
	cd e2e && $(GO) run ./cmd/benchtable < $(BENCH_OUT)
