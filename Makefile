# questbox — `make run` to see it work, `make test` to check it; `make` lists the rest.

GO       ?= go
ifeq ($(origin VERSION),undefined)
VERSION  := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
endif
LDFLAGS  := -s -w -X main.version=$(VERSION)
FUZZTIME ?= 30s
# Every fuzz target, as package:Target; make fuzz runs each for FUZZTIME.
FUZZ_TARGETS ?= ./gates:FuzzParseAnswer ./gates:FuzzParseAnswerFast ./gates:FuzzDateScan ./gates:FuzzParseOwnerAnswer ./gates:FuzzParseMemberAnswer ./gates:FuzzParseAcceptAnswer ./gates/judge:FuzzParse \
	./config:FuzzParse ./config:FuzzSizeText ./ui/mqtt:FuzzParseCommand ./ui/api:FuzzPostBodies ./engine:FuzzPromptTemplate ./release:FuzzInspect
BENCH_ARGS ?=
# Debian packages the tests need, installed by scripts/deps.sh when missing:
# mosquitto (the MQTT tests run a real broker on a loopback port), chromium
# (the dashboard's browser tests; they fail under CI=true without it),
# iproute2 (the network-namespace fault test runs the daemon under
# `ip netns exec`), systemd (systemd-analyze checks the units), prometheus
# (promtool checks the /metrics exposition), minisign (release
# signatures are checked by hand with it; fails under CI=true without it)
# and man-db with groff-base (questbox(1) is rendered with man --warnings).
TEST_DEBS ?= mosquitto chromium iproute2 systemd prometheus minisign man-db groff-base
# Where browser tests save their screenshots.
ARTIFACTS ?= $(CURDIR)/artifacts
# Cross targets: GOOS/GOARCH[/GOARM] -> dist/questbox-linux-<name>, and
# its launcher of confined runs dist/questbox-confine-linux-<name>
# (cmd/questbox-confine, installed beside questbox).
CROSS    := amd64 arm64 armv6 armv7
CROSS_BINS := $(addprefix dist/questbox-linux-,$(CROSS)) $(addprefix dist/questbox-confine-linux-,$(CROSS))

.DEFAULT_GOAL := help
.PHONY: help build run test verify-units deb deb-test image image-test check fmt-check vet cross release test-arm bench bench-arm fuzz soak clean $(CROSS_BINS)

help: ## list the targets
	@echo "usage: make TARGET   (GO=$(GO), VERSION=$(VERSION))"
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

build: ## bin/questbox and, beside it, bin/questbox-confine (the launcher of its confined runs)
	$(GO) build -o bin/ ./cmd/questbox ./cmd/questbox-confine

run: build ## the daemon with the demo provider, a demo quest and a 5s tick, data in ./data
	@echo "questbox: Ctrl-C stops it; 'make run' again resumes; in another terminal, ./bin/questbox --data ./data quest list talks to it"
	@echo "questbox: (or export PATH=\"\$$PWD/bin:\$$PATH\" QUESTBOX_DATA=\"\$$PWD/data\" there, then plain questbox quest list, as README.md writes it)"
	@echo "questbox: the dashboard's URL follows; its password (made on first start, never logged) is printed by: cat ./data/dashboard.first-password"
	@./bin/questbox run --data ./data --demo || [ $$? -eq 130 ]

# NORACE_TESTS count allocations, which the race detector changes (it
# allocates of its own and drops pooled items at random): they skip under
# -race, so make test runs them once more without it.
NORACE_TESTS = ^(TestWriteTickReusesItsBuffer|TestPipeReadsAllocateTheAnswerOnly|TestPrinterReusesItsBuffer)$$

test: ## install missing test deps (scripts/deps.sh), verify-units, go test -race ./..., then the allocation tests without -race (screenshots in artifacts/)
	GO=$(GO) scripts/deps.sh $(TEST_DEBS)
	scripts/verify-units.sh
	QUESTBOX_ARTIFACTS=$(ARTIFACTS) $(GO) test -race -count=1 -timeout 30m ./...
	$(GO) test -count=1 -run '$(NORACE_TESTS)' ./engine/agent ./ui/api ./internal/daemon

verify-units: ## systemd-analyze verify and security on the units in systemd/ (and the image's)
	scripts/verify-units.sh

check: fmt-check vet ## gofmt, go vet, go test -race, and the cross builds
	$(GO) test -race ./...
	$(MAKE) --no-print-directory cross

fmt-check: ## fail if any file needs gofmt
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet: ## go vet ./...
	$(GO) vet ./...

cross: $(CROSS_BINS) ## static release binaries (questbox, questbox-confine) for amd64, arm64, armv6, armv7 in dist/

# The release key: QUESTBOX_RELEASE_KEY names the minisign secret key file
# (never in the repository; see the README, "Releases"). release.pub is its
# public half, which the .deb and the image install as
# /etc/questbox/release.pub.
RELEASE_PUB ?= dist/release.pub

release: cross ## the questbox cross builds, each signed (FILE.minisig) with the key QUESTBOX_RELEASE_KEY names; dist/release.pub
	@test -n "$$QUESTBOX_RELEASE_KEY" || { echo "make release: set QUESTBOX_RELEASE_KEY to the release secret key file (README, Releases)"; exit 1; }
	$(GO) run ./cmd/questbox-release sign --version $(VERSION) $(addprefix dist/questbox-linux-,$(CROSS))
	$(GO) run ./cmd/questbox-release pub dist/release.pub

dist/questbox-linux-amd64 dist/questbox-confine-linux-amd64: GOENV := GOARCH=amd64
dist/questbox-linux-arm64 dist/questbox-confine-linux-arm64: GOENV := GOARCH=arm64
dist/questbox-linux-armv6 dist/questbox-confine-linux-armv6: GOENV := GOARCH=arm GOARM=6
dist/questbox-linux-armv7 dist/questbox-confine-linux-armv7: GOENV := GOARCH=arm GOARM=7
$(addprefix dist/questbox-linux-,$(CROSS)):
	CGO_ENABLED=0 GOOS=linux $(GOENV) $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $@ ./cmd/questbox
# The launcher has no version string of its own: the daemon checks that it
# is of its own build (internal/confine).
$(addprefix dist/questbox-confine-linux-,$(CROSS)):
	CGO_ENABLED=0 GOOS=linux $(GOENV) $(GO) build -trimpath -ldflags "-s -w" -o $@ ./cmd/questbox-confine

test-arm: ## the whole unit test suite built for arm64 and armv6, run under qemu-user (minutes)
	GO=$(GO) scripts/test-arm.sh

bench: ## Go benchmarks, then every harness under bench/ (BENCH_ARGS passed to each)
	$(GO) test -run '^$$' -bench . -benchmem ./...
	@for p in $$($(GO) list -f '{{if eq .Name "main"}}{{.ImportPath}}{{end}}' ./bench/... 2>/dev/null); do \
		echo "$(GO) run $$p $(BENCH_ARGS)"; $(GO) run $$p $(BENCH_ARGS) || exit 1; done

bench-arm: ## the tick and scale benchmarks as arm64 and armv6 binaries under qemu-user (relative only, not Pi numbers; minutes)
	GO=$(GO) scripts/bench-arm.sh

fuzz: ## every fuzz target (agent and owner answers, judge output, config, MQTT commands, API bodies, prompt templates against text/template, release binaries) for FUZZTIME (30s) each
	@set -e; for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; fn=$${t##*:}; \
		echo "$(GO) test -run '^$$' -fuzz '^$$fn$$' -fuzztime $(FUZZTIME) $$pkg"; \
		$(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) $$pkg; done

SOAK_KILLS ?= 300
soak: ## crash loop: SOAK_KILLS (300) SIGKILLs of a real daemon with MQTT, every invariant checked after each restart (minutes)
	GO=$(GO) scripts/deps.sh $(TEST_DEBS)
	SOAK_KILLS=$(SOAK_KILLS) $(GO) test -tags soak -run '^TestSoak$$' -v -count=1 -timeout 30m ./bench/soak


dist/questbox.toml: systemd/questbox.toml
	@mkdir -p dist
	sed 's|^#socket = "/run/questbox/questbox.sock"$$|socket = "/run/questbox/questbox.sock"|' $< >$@
	@grep -q '^socket = "/run/questbox/questbox.sock"$$' $@ || { echo "$<: no #socket line to set"; rm -f $@; exit 1; }

deb: dist/questbox-linux-arm64 dist/questbox-confine-linux-arm64 dist/questbox-linux-armv6 dist/questbox-confine-linux-armv6 dist/questbox.toml ## dist/questbox_<version>_arm64.deb and _armhf.deb
	image/deb.sh arm64 armhf

deb-test: dist/questbox-linux-amd64 dist/questbox-confine-linux-amd64 dist/questbox.toml ## build an amd64 .deb; install, reinstall, remove and purge it in a scratch Debian root; upgrade to it from the previous release tag's package and back
	image/deb.sh amd64
	image/deb-test.sh
	image/deb-upgrade-test.sh

image: dist/questbox-linux-arm64 dist/questbox-confine-linux-arm64 dist/questbox.toml ## dist/questbox-arm64.img.xz (+ .sha256): the SD card image (rootfs cached: first build ~30 min, then ~4)
	image/build.sh

image-test: image ## boot the image twice under qemu-system-aarch64 -M virt (ready, /healthz, a quest survives, an update and four rollbacks, LEDs and button on gpio-sim lines, clean poweroff); minutes
	VERSION=$(VERSION) GO=$(GO) image/test.sh

clean: ## remove build output (dist/) and test artifacts; ./data from `make run` is kept
	rm -rf dist bin artifacts
