# questbox — `make run` to see it work, `make test` to check it; `make` lists the rest.

GO       ?= go
ifeq ($(origin VERSION),undefined)
VERSION  := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
endif
LDFLAGS  := -s -w -X main.version=$(VERSION)
FUZZTIME ?= 60s
BENCH_ARGS ?=
# Debian packages the tests need, installed by scripts/deps.sh when missing
# (mosquitto: the MQTT tests run a real broker on a loopback port; systemd:
# systemd-analyze checks the units).
TEST_DEBS ?= mosquitto systemd
# Cross targets: GOOS/GOARCH[/GOARM] -> dist/questbox-linux-<name>.
CROSS    := amd64 arm64 armv6 armv7

.DEFAULT_GOAL := help
.PHONY: help run test verify-units deb deb-test image image-test check fmt-check vet cross test-arm bench fuzz clean $(addprefix dist/questbox-linux-,$(CROSS))

help: ## list the targets
	@echo "usage: make TARGET   (GO=$(GO), VERSION=$(VERSION))"
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

run: ## the daemon with the demo provider, a demo quest and a 5s tick, data in ./data
	$(GO) build -o bin/questbox ./cmd/questbox
	@echo "questbox: Ctrl-C stops it; 'make run' again resumes; ./bin/questbox --data ./data quest list (in another terminal) talks to it"
	@./bin/questbox run --data ./data --demo || [ $$? -eq 130 ]

test: ## install missing test deps (scripts/deps.sh), verify-units, then go test -race ./...
	GO=$(GO) scripts/deps.sh $(TEST_DEBS)
	scripts/verify-units.sh
	$(GO) test -race -count=1 ./...

verify-units: ## systemd-analyze verify and security on the units in systemd/ (and the image's)
	scripts/verify-units.sh

check: fmt-check vet ## gofmt, go vet, go test -race, and the cross builds
	$(GO) test -race ./...
	$(MAKE) --no-print-directory cross

fmt-check: ## fail if any file needs gofmt
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet: ## go vet ./...
	$(GO) vet ./...

cross: $(addprefix dist/questbox-linux-,$(CROSS)) ## static release binaries for amd64, arm64, armv6, armv7 in dist/

dist/questbox-linux-amd64: GOENV := GOARCH=amd64
dist/questbox-linux-arm64: GOENV := GOARCH=arm64
dist/questbox-linux-armv6: GOENV := GOARCH=arm GOARM=6
dist/questbox-linux-armv7: GOENV := GOARCH=arm GOARM=7
$(addprefix dist/questbox-linux-,$(CROSS)):
	CGO_ENABLED=0 GOOS=linux $(GOENV) $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $@ ./cmd/questbox

test-arm: ## clock, engine, gates and device tests built for arm64 and armv6, run under qemu-user
	GO=$(GO) scripts/test-arm.sh

bench: ## Go benchmarks, then every harness under bench/ (BENCH_ARGS passed to each)
	$(GO) test -run '^$$' -bench . -benchmem ./...
	@for p in $$($(GO) list -f '{{if eq .Name "main"}}{{.ImportPath}}{{end}}' ./bench/... 2>/dev/null); do \
		echo "$(GO) run $$p $(BENCH_ARGS)"; $(GO) run $$p $(BENCH_ARGS) || exit 1; done

fuzz: ## fuzz the worker-answer parser for FUZZTIME (60s)
	$(GO) test -run '^$$' -fuzz FuzzParseAnswer -fuzztime $(FUZZTIME) ./gates

dist/questbox.toml: systemd/questbox.toml
	@mkdir -p dist
	sed 's|^#socket = "/run/questbox/questbox.sock"$$|socket = "/run/questbox/questbox.sock"|' $< >$@
	@grep -q '^socket = "/run/questbox/questbox.sock"$$' $@ || { echo "$<: no #socket line to set"; rm -f $@; exit 1; }

deb: dist/questbox-linux-arm64 dist/questbox-linux-armv6 dist/questbox.toml ## dist/questbox_<version>_arm64.deb and _armhf.deb
	image/deb.sh arm64 armhf

deb-test: dist/questbox-linux-amd64 dist/questbox.toml ## build an amd64 .deb; install, reinstall, remove and purge it in a scratch Debian root
	image/deb.sh amd64
	image/deb-test.sh

image: dist/questbox-linux-arm64 dist/questbox.toml ## dist/questbox-arm64.img.xz (+ .sha256): the SD card image (rootfs cached: first build ~30 min, then ~4)
	image/build.sh

image-test: image ## boot the image twice under qemu-system-aarch64 -M virt (ready, /healthz, a quest survives, clean poweroff); minutes
	image/test.sh

clean: ## remove build output (dist/); ./data from `make run` is kept
	rm -rf dist bin
