# ctrlkit: every check runs from here. `make test` is what CI runs.
GO            ?= go
STATICCHECK   ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
PKGS          := ./...
BENCH_COUNT   ?= 5
BENCH_TIME    ?= 1s

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

bench:
	$(GO) test -run '^$$' -bench . -benchmem -count $(BENCH_COUNT) -benchtime $(BENCH_TIME) $(PKGS)
