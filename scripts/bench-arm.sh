#!/usr/bin/env bash
# bench-arm.sh — the scale benchmarks as the Pi's binaries, under qemu-user:
# a relative measure of Pi-class cost. Emulated numbers are NOT a Pi's
# numbers: qemu translates every instruction (its cost per instruction is
# not a Cortex-A53's), its RSS includes the emulator's own, and the disk is
# this machine's, not an SD card. Compare arm64 with armv6 and with the
# native run of the same commands, not with a Pi.
#
#   scripts/bench-arm.sh                    the default (bounded) configs
#   SCALE_CONFIGS=10:100000 scripts/bench-arm.sh
#
# 1. engine BenchmarkTick (the tick's own work) and BenchmarkCycle (a whole
#    cycle: dispatch, answers, verdicts, group commit) for arm64 and
#    armv6, built with go test -c and run under qemu;
# 2. bench/scale (a whole daemon from outside) with dist/questbox-linux-arm64
#    and -armv6 under qemu; the harness itself runs natively.
# Both run natively first, so that the ratios come from one moment.
#
# Environment: GO (default go), SCALE_CONFIGS, SCALE_TICKS, TICK_BENCH.
set -euo pipefail

cd "$(dirname "$0")/.."
GO=${GO:-go}
CONFIGS=${SCALE_CONFIGS:-1:10000,10:10000,100:10000}
TICKS=${SCALE_TICKS:-10}
TICK_BENCH=${TICK_BENCH:-'(Tick|Cycle)/active=(10|1000)/nodes=10000$'}
log() { printf 'bench-arm: %s\n' "$*" >&2; }

scripts/deps.sh qemu-user-static
make --no-print-directory dist/questbox-linux-arm64 dist/questbox-linux-armv6 >&2

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# The same benchmarks natively first, on the same host at the same moment:
# the ratios are the measure.
log "native: engine benchmarks ($TICK_BENCH)"
"$GO" test -run '^$' -bench "$TICK_BENCH" -benchtime 5x -benchmem ./engine
log "native: bench/scale $CONFIGS"
"$GO" run ./bench/scale -configs "$CONFIGS" -ticks "$TICKS"

for target in "arm64 qemu-aarch64-static" "armv6 qemu-arm-static -cpu arm1176"; do
	read -r arch qemu <<<"$target"
	env=(CGO_ENABLED=0 GOOS=linux GOARCH=arm64)
	[[ $arch == armv6 ]] && env=(CGO_ENABLED=0 GOOS=linux GOARCH=arm GOARM=6)
	log "$arch: engine benchmarks ($TICK_BENCH) under $qemu"
	env "${env[@]}" "$GO" test -c -o "$out/engine-$arch.test" ./engine
	# shellcheck disable=SC2086
	(cd engine && $qemu "$out/engine-$arch.test" -test.run '^$' -test.bench "$TICK_BENCH" -test.benchtime 5x -test.benchmem)
	log "$arch: bench/scale $CONFIGS under $qemu"
	"$GO" run ./bench/scale -bin "dist/questbox-linux-$arch" -qemu "$qemu" -configs "$CONFIGS" -ticks "$TICKS"
done
