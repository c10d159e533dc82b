#!/usr/bin/env bash
# gpio-sim.sh — the kernel's GPIO simulator, gpio-sim.ko, for the image's
# exact kernel: what `make image-test` loads into the booted test copy so
# that questbox drives real kernel GPIO lines (image/gpio-sim-test.sh).
# Never part of the shipped image.
#
#   image/gpio-sim.sh VMLINUZ    prints the path of gpio-sim.ko for the
#                                kernel VMLINUZ is, building it when the
#                                cache has none
#
# Debian's kernel ships neither gpio-sim nor gpio-mockup (`# CONFIG_GPIO_SIM
# is not set`). The module is built from Debian's own packages of that
# kernel's version, read from VMLINUZ's banner ("Linux version
# 6.1.0-NN-arm64 ... Debian 6.1.x-y"): linux-source-6.1 (the patched
# source; only drivers/gpio/gpio-sim.c, drivers/gpio/gpiolib.h and
# kernel/irq/irq_sim.c are taken from it), linux-headers-<release> and its
# -common part (the kernel's .config and Module.symvers: the module's
# vermagic and symbol CRCs are the kernel's), and linux-kbuild-6.1 for
# this machine (fixdep, modpost). They are downloaded with a private apt
# state (this machine's sources, arm64 added: the system's apt is not
# touched) and unpacked with dpkg -x; the compiler is Debian's
# gcc-aarch64-linux-gnu (gcc-12, the kernel's own).
#
# gpio-sim selects IRQ_SIM, which Debian's kernel leaves out: when the
# kernel does not export irq_domain_create_sim, kernel/irq/irq_sim.c is
# linked into the same module. It calls irq_to_desc(), which modules may
# not use; the one call is replaced by generic_handle_irq(), which runs the
# same handler (handle_simple_irq, set by irq_sim's own map) from the same
# irq_work.
#
# The module is kept in $QUESTBOX_IMAGE_CACHE (default
# ~/.cache/questbox-image, like the root file system), named after the
# kernel release, the Debian version and a hash of this script; REFRESH=1
# builds it again. A build takes about a minute (most of it unpacking the
# source tarball).
#
# Environment: QUESTBOX_IMAGE_CACHE, REFRESH.
set -euo pipefail

cd "$(dirname "$0")/.."
log() { printf 'gpio-sim: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

vmlinuz=${1:-}
[[ -n $vmlinuz && -f $vmlinuz ]] || die "usage: image/gpio-sim.sh VMLINUZ (the image's kernel)"
CACHE=${QUESTBOX_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/questbox-image}
mkdir -p "$CACHE"

# "Linux version 6.1.0-57-arm64 (debian-kernel@lists.debian.org) (gcc-12
# ...) #1 SMP Debian 6.1.192-3 (2026-11-26)"
banner=$(LC_ALL=C grep -a -o -m1 'Linux version [0-9][[:print:]]*' "$vmlinuz" | head -1) || true
release=$(awk '{print $3}' <<<"$banner")
version=$(sed -n 's/.* SMP Debian \([^ ]*\) .*/\1/p' <<<"$banner")
[[ $release =~ ^([0-9]+\.[0-9]+)\.[0-9]+-[0-9]+-arm64$ ]] ||
	die "$vmlinuz: not a Debian arm64 kernel (banner: '${banner:-none}')"
series=${BASH_REMATCH[1]}
[[ $version =~ ^[0-9][0-9A-Za-z.+~-]*$ ]] || die "$vmlinuz: no Debian version in its banner '$banner'"

key=$(grep -v '^[[:space:]]*#' image/gpio-sim.sh | sha256sum | cut -c1-16)
ko=$CACHE/gpio-sim-$release-$version-$key.ko
if [[ -s $ko && -z ${REFRESH:-} ]]; then
	log "cached: $ko"
	echo "$ko"
	exit 0
fi

CI=${CI:-} scripts/deps.sh gcc-aarch64-linux-gnu make kmod xz-utils libelf1 libssl3
log "building $ko for Linux $release (Debian $version)"
start=$(date +%s)
work=$(mktemp -d "${TMPDIR:-/tmp}/questbox-gpio-sim.XXXXXX")
trap 'rm -rf "$work"' EXIT

# --- the packages of this kernel version --------------------------------
apt=$work/apt
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/debs"
: >"$apt/status"
aptopts=(-q -o "Dir::State=$apt" -o "Dir::State::Lists=$apt/lists" -o "Dir::State::status=$apt/status"
	-o "Dir::Cache=$apt/cache" -o "APT::Architectures::=$(dpkg --print-architecture)" -o "APT::Architectures::=arm64"
	-o Debug::NoLocking=1 -o APT::Sandbox::User=root)
apt-get "${aptopts[@]}" update >"$work/apt-update.log" 2>&1 || die "apt-get update (arm64 added) failed: $(tail -5 "$work/apt-update.log")"
pkgs=("linux-source-$series=$version" "linux-headers-$release:arm64=$version"
	"linux-headers-${release%-arm64}-common=$version" "linux-kbuild-$series:$(dpkg --print-architecture)=$version")
(cd "$apt/debs" && apt-get "${aptopts[@]}" download "${pkgs[@]}") >"$work/apt-download.log" 2>&1 ||
	die "cannot download ${pkgs[*]} (is Debian $version still in the archive?): $(tail -5 "$work/apt-download.log")"

root=$work/root
for deb in "$apt"/debs/linux-headers-*.deb "$apt"/debs/linux-kbuild-*.deb; do
	dpkg -x "$deb" "$root"
done
headers=$root/usr/src/linux-headers-$release
# Its Makefile includes the -common one by absolute path; the scripts and
# tools links are relative and land in the unpacked linux-kbuild.
sed -i "s|^include /usr/src/|include $root/usr/src/|" "$headers/Makefile"
grep -q "^include $root/usr/src/linux-headers-.*-common/Makefile$" "$headers/Makefile" ||
	die "$headers/Makefile is not the one-line include this script expects: $(cat "$headers/Makefile")"
[[ -x $headers/scripts/mod/modpost ]] || die "no modpost in the unpacked linux-kbuild-$series"

src=linux-source-$series
mod=$work/mod
mkdir -p "$mod"
dpkg-deb --fsys-tarfile "$apt"/debs/linux-source-*.deb | tar -xO "./usr/src/$src.tar.xz" | xz -dc |
	tar -x -C "$work" "$src/drivers/gpio/gpio-sim.c" "$src/drivers/gpio/gpiolib.h" "$src/kernel/irq/irq_sim.c"
cp "$work/$src/drivers/gpio/gpiolib.h" "$mod/"

# --- the module ------------------------------------------------------------
grep -q 'CONFIG_GPIOLIB=y' "$headers/.config" || die "the kernel has no gpiolib"
if grep -q '[[:space:]]irq_domain_create_sim[[:space:]]' "$headers/Module.symvers"; then
	cp "$work/$src/drivers/gpio/gpio-sim.c" "$mod/"
	echo 'obj-m := gpio-sim.o' >"$mod/Kbuild"
else
	log "the kernel has no IRQ_SIM: linking kernel/irq/irq_sim.c into the module"
	# A module's objects may not share its name: gpio-sim.o is the link.
	cp "$work/$src/drivers/gpio/gpio-sim.c" "$mod/gpio-sim-main.c"
	sed 's/handle_simple_irq(irq_to_desc(irqnum));/generic_handle_irq(irqnum);/' \
		"$work/$src/kernel/irq/irq_sim.c" >"$mod/irq_sim.c"
	! grep -q 'irq_to_desc' "$mod/irq_sim.c" || die "irq_sim.c of $version calls irq_to_desc where this script does not expect it"
	printf 'obj-m := gpio-sim.o\ngpio-sim-y := gpio-sim-main.o irq_sim.o\n' >"$mod/Kbuild"
fi
nice -n 10 make -s -C "$headers" M="$mod" ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- modules >"$work/make.log" 2>&1 ||
	die "the module did not build: $(tail -20 "$work/make.log")"
aarch64-linux-gnu-strip --strip-debug "$mod/gpio-sim.ko"
vermagic=$(modinfo -F vermagic "$mod/gpio-sim.ko")
[[ $vermagic == "$release "* ]] || die "gpio-sim.ko has vermagic '$vermagic', the kernel is $release"

tmp=$CACHE/.building-gpio-sim-$key.ko
cp "$mod/gpio-sim.ko" "$tmp"
mv "$tmp" "$ko"
# Modules of other kernels or of another version of this script are dead weight.
find "$CACHE" -maxdepth 1 -name 'gpio-sim-*.ko' ! -name "$(basename "$ko")" -delete
log "built in $(($(date +%s) - start))s: $(du -h "$ko" | cut -f1), vermagic $vermagic"
echo "$ko"
