#!/usr/bin/env bash
# test-arm.sh — run the whole unit test suite as the Pi runs it: every package
# with tests compiled for arm64 (Pi 3/4/5, Zero 2 W) and armv6 (Pi Zero/1),
# executed under qemu-user (no binfmt needed: the qemu binaries are invoked
# directly).
#
#   scripts/test-arm.sh [PACKAGE_PATTERN...]     default ./... (every package with tests)
#
# Only the test binary is emulated. What a test execs runs natively: the
# cmd/questbox tests that build the daemon with `go build` (TestCrash, the
# MQTT Last Will test) build and run an amd64 daemon, and mosquitto is the
# host's. Those tests still run; they prove the arm test binary's side.
#
# Skipped under emulation (SKIP below): the tests that re-execute their own
# test binary — TestAnotherUIDIsRefused (ui/api, as user nobody) and
# TestAcknowledgedSubmitsSurviveSIGKILL (engine, a child it SIGKILLs) — since
# an arm binary exec'd by the kernel needs binfmt_misc, which this script
# does not register on the host (a host that has it registered for aarch64
# would pass them on arm64 only). A new test that re-executes itself
# belongs in SKIP. Everything else runs; nothing needs a real Pi.
#
# 32-bit alignment of 64-bit atomics: on armv6 the runtime panics
# ("unaligned 64-bit atomic operation") when a test reaches a misaligned
# one, and before any build this script fails if the code calls the
# sync/atomic 64-bit functions on plain fields at all (atomic.Int64 and
# atomic.Uint64 are aligned by the compiler on every architecture; go vet
# has no atomicalign pass).
#
# Installs qemu-user-static through deps.sh when missing. Without qemu it
# fails when CI=true and skips with a warning elsewhere.
#
# armv6 runs with -cpu arm1176 (the Pi Zero/1's core), so an ARMv7-only
# instruction in the binary faults here instead of on a user's Pi.
#
# Environment: GO (default: go), CI.
set -euo pipefail

cd "$(dirname "$0")/.."
GO=${GO:-go}
log() { printf 'test-arm: %s\n' "$*" >&2; }

((${#@} > 0)) || set -- ./...

raw=$(grep -rnE 'atomic\.(Add|Load|Store|Swap|CompareAndSwap)(Int64|Uint64)\(' --include='*.go' . || true)
if [[ -n $raw ]]; then
	log "64-bit sync/atomic functions on plain fields (misaligned on 32-bit ARM); use atomic.Int64/atomic.Uint64:"
	printf '%s\n' "$raw" >&2
	exit 1
fi

scripts/deps.sh qemu-user-static
for q in qemu-aarch64-static qemu-arm-static; do
	if ! command -v "$q" >/dev/null; then
		[[ ${CI:-} == true ]] && { log "$q not found"; exit 1; }
		log "warning: $q not found; skipping the arm tests"
		exit 0
	fi
done

SKIP='^(TestAnotherUIDIsRefused|TestAcknowledgedSubmitsSurviveSIGKILL)$'

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# Only packages that have tests.
mapfile -t pkgs < <("$GO" list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{.Dir}}{{end}}' "$@")
((${#pkgs[@]} > 0)) || { log "no packages with tests in $*"; exit 1; }

failed=0
for target in "arm64 qemu-aarch64-static" "arm6 qemu-arm-static -cpu arm1176"; do
	read -r arch qemu <<<"$target"
	env=(CGO_ENABLED=0 GOOS=linux GOARCH=arm64)
	[[ $arch == arm6 ]] && env=(CGO_ENABLED=0 GOOS=linux GOARCH=arm GOARM=6)
	for line in "${pkgs[@]}"; do
		read -r pkg dir <<<"$line"
		bin=$out/$arch-${pkg//\//_}.test
		if ! env "${env[@]}" "$GO" test -c -o "$bin" "$pkg"; then
			printf 'FAIL\t%s\t[%s] (build failed)\n' "$pkg" "$arch"
			failed=1
			continue
		fi
		# Run in the package directory, as `go test` does, so testdata/ resolves.
		# $qemu is word-split on purpose (it carries -cpu).
		# shellcheck disable=SC2086
		if (cd "$dir" && $qemu "$bin" -test.v=false -test.timeout=20m -test.skip="$SKIP" >"$bin.log" 2>&1); then
			printf 'ok  \t%s\t[%s]\n' "$pkg" "$arch"
		else
			cat "$bin.log"
			printf 'FAIL\t%s\t[%s]\n' "$pkg" "$arch"
			failed=1
		fi
	done
done
exit $failed
