#!/usr/bin/env bash
# test.sh — boot the questbox image under QEMU, twice, and check it as a
# user would: it comes up by itself, questbox reports READY, /healthz
# answers, a quest created in boot one is there in boot two, and both
# power-offs went through questbox's clean shutdown. In the second boot,
# image/test-update.sh updates the box to a newer build and rolls back from
# four broken ones (README, "Booting the image under QEMU").
#
#   image/test.sh [IMAGE.xz]       default dist/questbox-arm64.img.xz (make image-test)
#
# The machine is qemu-system-aarch64 -M virt -cpu cortex-a53 -m 1024: the
# Debian kernel and initrd are copied out of the image's boot partition
# (mtools, no mount), the disk is a copy of the image grown by 1 GiB (so the
# first boot's growing of the data partition is tested too) on virtio. The
# image's own boot-partition settings are used: an ssh key is written to
# questbox-ssh.pub on the copy, which is how the test gets a shell. The
# network is QEMU's user mode with restrict=on: the guest reaches nothing
# outside; only the forwarded ssh and dashboard ports on 127.0.0.1 reach it.
#
# Every wait is bounded (BOOT_TIMEOUT, default 1200 s per boot, emulation
# is slow); on failure the serial console logs are kept and named.
#
# In boot 2 an attacking agent (scripts/attack-agent.sh) runs under the
# image's own unit, once for a local-only quest and once for a quest that
# may use the network, and must be confined: only its project is written,
# the local one reaches no address outside the box (image/confine-test.sh).
#
# In boot 2 the daemon also runs on kernel GPIO lines: the kernel's
# gpio-sim, built for the image's kernel and loaded only in this copy,
# with questbox's LEDs read back and its button pressed
# (image/gpio-sim-test.sh).
#
# Writes dist/image-test.txt: image size, boot-to-ready times.
set -euo pipefail

cd "$(dirname "$0")/.."
log() { printf 'image-test: %s\n' "$*" >&2; }
xz_img=${1:-dist/questbox-arm64.img.xz}
BOOT_TIMEOUT=${BOOT_TIMEOUT:-1200}
SHUTDOWN_TIMEOUT=${SHUTDOWN_TIMEOUT:-300}

scripts/deps.sh qemu-system-arm qemu-utils mtools fdisk xz-utils openssh-client curl

work=$(mktemp -d "${TMPDIR:-/tmp}/questbox-image-test.XXXXXX")
qpid=
passed=0
failed=0
cleanup() {
	[[ -n $qpid ]] && kill "$qpid" 2>/dev/null && wait "$qpid" 2>/dev/null
	if ((failed > 0)) || [[ -n ${KEEP:-} ]]; then
		log "kept $work (console-1.log, console-2.log)"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT
ok() { log "ok: $*"; passed=$((passed + 1)); }
fail() {
	log "FAIL: $*"
	failed=$((failed + 1))
	echo "image-test: $passed passed, $failed failed"
	exit 1
}

[[ -f $xz_img ]] || fail "$xz_img missing: make image"
if [[ -f $xz_img.sha256 ]]; then
	(cd "$(dirname "$xz_img")" && sha256sum --quiet -c "$(basename "$xz_img").sha256") || fail "$xz_img does not match its .sha256"
	ok "$xz_img matches its .sha256"
fi
disk=$work/disk.img
xz -dc "$xz_img" >"$disk"
image_mib=$(($(stat -c %s "$disk") / 1024 / 1024))
truncate -s +1G "$disk" # a bigger card than the image

# The boot partition: its offset, the kernel and initrd the Pi would boot,
# and the ssh key this test logs in with.
boot_start=$(sfdisk -d "$disk" | awk -F'[=,]' '/^.*1 :/ {gsub(/ /, "", $2); print $2}')
fat="$disk@@$((boot_start * 512))"
kernel=$(mdir -b -i "$fat" ::/ | sed -n 's|^::/\(vmlinuz-.*\)|\1|p' | head -1)
initrd=$(mdir -b -i "$fat" ::/ | sed -n 's|^::/\(initrd.img-.*\)|\1|p' | head -1)
[[ -n $kernel && -n $initrd ]] || fail "no vmlinuz-*/initrd.img-* on the boot partition"
mcopy -i "$fat" "::/$kernel" "$work/vmlinuz"
mcopy -i "$fat" "::/$initrd" "$work/initrd"
ssh-keygen -q -t ed25519 -N '' -C image-test -f "$work/key"
mcopy -i "$fat" "$work/key.pub" ::/questbox-ssh.pub
ok "kernel $kernel and $initrd from the boot partition; ssh key on it"
# The update and rollback checks of boot 2 (image/test-update.sh).
. image/test-update.sh
update_prepare
# The attacking agent, in boot 2 (image/confine-test.sh).
source image/confine-test.sh
# The pins under a real kernel, in boot 2 (image/gpio-sim-test.sh).
source image/gpio-sim-test.sh
gpiosim_prepare

freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
sshport=$(freeport)
httpport=$(freeport)
ssh_() {
	ssh -q -i "$work/key" -p "$sshport" -o BatchMode=yes -o ConnectTimeout=10 -o ServerAliveInterval=10 \
		-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null root@127.0.0.1 "$@"
}

# boot N: starts QEMU, waits for ssh, then for questbox.service to be
# active: with Type=notify that is questbox's READY=1. (The serial console's
# "Started questbox.service" line is not reliable: systemd's progress
# spinner overwrites it when the boot is slow.) ready is the time from the
# kernel's start to READY (systemd's own timestamp); ready_wall the time
# from QEMU's start to the test seeing it.
boot() {
	local n=$1 console=$work/console-$1.log t0 state
	: >"$console"
	t0=$(date +%s)
	qemu-system-aarch64 -M virt -cpu cortex-a53 -smp 2 -m 1024 -no-reboot \
		-display none -monitor none -serial "file:$console" \
		-kernel "$work/vmlinuz" -initrd "$work/initrd" \
		-append "root=LABEL=QBROOT ro console=ttyAMA0 net.ifnames=0 fsck.repair=yes" \
		-drive "file=$disk,if=none,format=raw,id=hd,cache=unsafe" -device virtio-blk-pci,drive=hd \
		-netdev "user,id=net,restrict=on,hostfwd=tcp:127.0.0.1:$sshport-:22,hostfwd=tcp:127.0.0.1:$httpport-:8080" \
		-device virtio-net-pci,netdev=net,romfile= \
		-device virtio-rng-pci &
	qpid=$!
	local deadline=$(($(date +%s) + BOOT_TIMEOUT))
	until ssh_ true 2>/dev/null; do
		kill -0 "$qpid" 2>/dev/null || fail "boot $n: QEMU exited (see $console)"
		(($(date +%s) < deadline)) || fail "boot $n: no ssh within ${BOOT_TIMEOUT}s (see $console)"
		sleep 5
	done
	while :; do
		state=$(ssh_ systemctl is-active questbox.service || true)
		[[ $state == active ]] && break
		[[ $state == failed ]] && fail "boot $n: questbox.service failed: $(ssh_ journalctl -b -u questbox -o cat | tail -20)"
		(($(date +%s) < deadline)) || fail "boot $n: questbox not ready within ${BOOT_TIMEOUT}s ($state; see $console)"
		sleep 5
	done
	ready_wall=$(($(date +%s) - t0))
	ready=$(ssh_ systemctl show -p ActiveEnterTimestampMonotonic --value questbox.service)
	ready=$((ready / 1000000))
	ok "boot $n: questbox READY ${ready}s after the kernel started (${ready_wall}s after QEMU started, seen over ssh)"
}

# poweroff N: a clean poweroff through systemd; QEMU exits when it is done.
poweroff() {
	local n=$1 deadline=$(($(date +%s) + SHUTDOWN_TIMEOUT))
	ssh_ systemctl poweroff || true
	while kill -0 "$qpid" 2>/dev/null; do
		(($(date +%s) < deadline)) || fail "boot $n: no poweroff within ${SHUTDOWN_TIMEOUT}s (see $work/console-$n.log)"
		sleep 2
	done
	wait "$qpid" || true
	qpid=
	ok "boot $n: powered off"
}

# healthz: through QEMU's port forward when the dashboard serves it on the
# network, otherwise from inside the box over the control socket.
healthz() {
	local n=$1 h
	if h=$(curl -sf --max-time 20 "http://127.0.0.1:$httpport/healthz"); then
		ok "boot $n: /healthz through the port forward: $(tr -d ' \n' <<<"$h")"
	elif h=$(ssh_ curl -sf --max-time 20 --unix-socket /run/questbox/questbox.sock http://questbox/healthz); then
		ok "boot $n: /healthz over the control socket (nothing serves :8080 in this build): $(tr -d ' \n' <<<"$h")"
	else
		fail "boot $n: /healthz answered neither on :8080 nor on the control socket"
	fi
}

# --- boot 1 ---------------------------------------------------------------
boot 1
ready1=$ready wall1=$ready_wall
[[ $(ssh_ systemctl is-active questbox.service) == active ]] || fail "boot 1: questbox.service is not active"
user=$(ssh_ ps -o user= -C questbox | head -1)
[[ $user == questbox ]] || fail "boot 1: the daemon runs as '$user', want questbox"
ok "boot 1: questbox.service active, running as user questbox"
# The agents' runs start the small launcher installed beside the daemon,
# not the daemon's own binary (the start-up report names it; read whole,
# then matched, as the man page below).
journal=$(ssh_ journalctl -b -u questbox.service -o cat)
report=$(grep -m1 'msg="agents run' <<<"$journal" || true)
[[ $report == *'; launcher /usr/bin/questbox-confine"'* ]] ||
	fail "boot 1: the start-up confinement report does not name /usr/bin/questbox-confine as the launcher: '$report'"
ok "boot 1: the agents' runs are launched by /usr/bin/questbox-confine"
healthz 1
data_mib=$(ssh_ df -m --output=size /var/lib/questbox | tail -1 | tr -d ' ')
((data_mib > 512)) || fail "boot 1: the data partition was not grown ($data_mib MiB)"
ok "boot 1: the data partition grew to $data_mib MiB"
[[ $(ssh_ hostname) == questbox ]] || fail "boot 1: hostname $(ssh_ hostname)"
ssh_ systemctl is-active avahi-daemon.service >/dev/null || fail "boot 1: avahi-daemon is not running"
ok "boot 1: hostname questbox, avahi-daemon running (questbox.local)"
[[ $(ssh_ man -w questbox) == /usr/share/man/man1/questbox.1.gz ]] || fail "boot 1: man -w questbox: $(ssh_ man -w questbox 2>&1)"
# Read whole, then matched: grep -q stops at the first match, and ssh,
# still writing the rest of the page, dies of SIGPIPE, which pipefail
# would take for a failed check.
page=$(ssh_ "MANWIDTH=80 man questbox 2>/dev/null | col -b")
grep -q 'questbox update' <<<"$page" || fail "boot 1: man questbox does not render questbox(1)"
ok "boot 1: man questbox shows questbox(1)"
if pw=$(ssh_ journalctl -b -u questbox-setup -o cat | grep -o 'dashboard password: [a-z0-9-]*'); then
	ssh_ test -s /boot/firmware/questbox-password.txt || fail "boot 1: $pw in the journal but no questbox-password.txt"
	ok "boot 1: $pw, in the journal and on the boot partition"
else
	log "note: this build has no dashboard password (questbox password): not checked"
fi
q=$(ssh_ "questbox quest new image-test --direction 'a quest that survives a reboot' --provider external")
[[ $q == q* ]] || fail "boot 1: quest new printed '$q'"
ok "boot 1: quest $q created through the CLI and the control socket"
poweroff 1

# --- boot 2 ---------------------------------------------------------------
boot 2
ready2=$ready wall2=$ready_wall
grep -q image-test <<<"$(ssh_ questbox quest list)" || fail "boot 2: the quest from boot 1 is gone: $(ssh_ questbox quest list)"
ok "boot 2: quest $q from boot 1 is there"
ssh_ systemctl stop questbox.service
ssh_ questbox verify >/dev/null || fail "boot 2: questbox verify failed on the store"
ssh_ systemctl start questbox.service
ok "boot 2: questbox verify passes on the store"
prev=$(ssh_ journalctl -b -1 -o cat -u questbox.service)
for want in "questbox is running" "stopping: no more dispatches" "msg=stopped" "Deactivated successfully"; do
	grep -qF "$want" <<<"$prev" || fail "boot 2: boot 1's journal lacks '$want':
$prev"
done
for bad in "Watchdog timeout" "timed out" "Killing" "status=6/ABRT" "Failed with result"; do
	grep -qF "$bad" <<<"$prev" && fail "boot 2: boot 1's journal has '$bad':
$prev"
done
ok "boot 2: boot 1 shut questbox down cleanly (stopping, STOPPING=1, stopped; no watchdog, no kill)"
restarts=$(ssh_ systemctl show -p NRestarts --value questbox.service)
[[ $restarts == 0 ]] || fail "boot 2: questbox.service restarted $restarts times"
update_test 2
confine_check 2
gpiosim_check 2
poweroff 2

xz_mib=$(($(stat -c %s "$xz_img") / 1024 / 1024))
{
	echo "image: $xz_img $xz_mib MiB compressed, $image_mib MiB raw"
	echo "kernel start to questbox READY: first boot ${ready1}s, second boot ${ready2}s (QEMU start to READY seen over ssh: ${wall1}s, ${wall2}s)"
	echo "gpio-sim LED and button checks (boot 2): ${gpiosim_time}s"
	echo "machine: qemu-system-aarch64 -M virt -cpu cortex-a53 -smp 2 -m 1024, TCG (no KVM) on $(nproc) host cores"
} | tee dist/image-test.txt >&2
echo "image-test: $passed passed, $failed failed"
