#!/usr/bin/env bash
# deb-test.sh — install, reinstall, remove and purge the questbox .deb in a
# scratch Debian root, as dpkg on a real system would, and check each step.
#
#   image/deb-test.sh [DEB]     default: the newest dist/questbox_*_amd64.deb
#
# The root is a minimal Debian bookworm for this machine's architecture
# (mmdebstrap, with adduser and systemd for the maintainer scripts), cached
# as a tarball beside the image's rootfs ($QUESTBOX_IMAGE_CACHE). systemd
# does not run in it, so the postinst enables the service but does not
# start it: the chroot guard is what is tested there. As a user other than
# root it runs itself under `unshare --map-root-user --map-auto`.
set -euo pipefail

cd "$(dirname "$0")/.."
log() { printf 'deb-test: %s\n' "$*" >&2; }
fail() { log "FAIL: $*"; exit 1; }

arch=$(dpkg --print-architecture)
deb=${1:-$(ls -t dist/questbox_*_"$arch".deb 2>/dev/null | head -1)}
[[ -f $deb ]] || fail "no dist/questbox_*_$arch.deb: image/deb.sh $arch"
scripts/deps.sh mmdebstrap debian-archive-keyring

source image/debroot.sh
debroot_userns "$deb"
debroot_unpack
cp "$deb" "$root/tmp/questbox.deb"
inroot() { chroot "$root" "$@"; }
passed=0
ok() { log "ok: $*"; passed=$((passed + 1)); }

# 1. install
inroot dpkg -i /tmp/questbox.deb >"$root/tmp/install.log" 2>&1 || { cat "$root/tmp/install.log" >&2; fail "dpkg -i"; }
inroot dpkg -s questbox | grep -q '^Status: install ok installed' || fail "not installed"
ok "dpkg -i installs $(basename "$deb")"
inroot getent passwd questbox | grep -q ':/var/lib/questbox:/usr/sbin/nologin$' || fail "no questbox system user"
inroot id -nG questbox | tr ' ' '\n' | grep -qx gpio || fail "questbox is not in group gpio: $(inroot id -nG questbox)"
ok "user questbox, in group gpio"
perm=$(inroot stat -c '%a %U %G' /etc/questbox/questbox.toml)
[[ $perm == "640 root questbox" ]] || fail "config permissions: $perm"
inroot dpkg-query -W -f='${Conffiles}\n' questbox | grep -q /etc/questbox/questbox.toml || fail "the config is not a conffile"
ok "/etc/questbox/questbox.toml: conffile, 0640 root:questbox"
[[ -L $root/etc/systemd/system/multi-user.target.wants/questbox.service ]] || fail "questbox.service not enabled"
grep -q 'start' "$root/tmp/install.log" && fail "the postinst tried to start the service without systemd running: $(cat "$root/tmp/install.log")"
ok "questbox.service enabled, not started (no systemd in a chroot)"
inroot questbox version >/dev/null || fail "questbox version"
[[ -x $root/usr/bin/questbox-confine ]] || fail "no /usr/bin/questbox-confine beside /usr/bin/questbox"
ok "/usr/bin/questbox and its launcher /usr/bin/questbox-confine"
gzip -dc "$root/usr/share/man/man1/questbox.1.gz" >"$root/tmp/questbox.1" || fail "no man page /usr/share/man/man1/questbox.1.gz"
grep -q '^\.TH QUESTBOX 1' "$root/tmp/questbox.1" || fail "/usr/share/man/man1/questbox.1.gz is not questbox(1)"
ok "the man page questbox(1)"
inroot questbox run --check-config >"$root/tmp/check.log" 2>&1 || { cat "$root/tmp/check.log" >&2; fail "run --check-config on the packaged config"; }
grep -q 'socket /run/questbox/questbox.sock' "$root/tmp/check.log" || fail "the packaged config does not put the socket in /run/questbox: $(cat "$root/tmp/check.log")"
ok "the packaged config is valid; socket /run/questbox/questbox.sock"

# 2. reinstall over a changed config: the change is kept
echo '# changed by the admin' >>"$root/etc/questbox/questbox.toml"
inroot dpkg -i --force-confold /tmp/questbox.deb >/dev/null 2>&1 || fail "reinstall"
grep -q 'changed by the admin' "$root/etc/questbox/questbox.toml" || fail "reinstall replaced the changed config"
ok "reinstall keeps a changed config"

# 3. remove: the program goes, the data and the config stay
inroot install -d -o questbox -g questbox -m 0750 /var/lib/questbox
echo store >"$root/var/lib/questbox/questbox.db"
inroot dpkg -r questbox >/dev/null 2>&1 || fail "dpkg -r"
[[ ! -e $root/usr/bin/questbox && ! -e $root/usr/bin/questbox-confine && ! -e $root/usr/share/man/man1/questbox.1.gz ]] ||
	fail "dpkg -r left /usr/bin/questbox, /usr/bin/questbox-confine or the man page"
[[ -f $root/var/lib/questbox/questbox.db && -f $root/etc/questbox/questbox.toml ]] || fail "dpkg -r removed the store or the config"
inroot getent passwd questbox >/dev/null || fail "dpkg -r removed the user"
ok "dpkg -r removes the program, keeps the store, the config and the user"

# 4. purge: everything goes
inroot dpkg -P questbox >/dev/null 2>&1 || fail "dpkg -P"
[[ ! -e $root/var/lib/questbox && ! -e $root/etc/questbox ]] || fail "dpkg -P left $(ls -d "$root"/var/lib/questbox "$root"/etc/questbox 2>/dev/null)"
inroot getent passwd questbox >/dev/null && fail "dpkg -P left the questbox user"
[[ ! -e $root/etc/systemd/system/multi-user.target.wants/questbox.service ]] || fail "dpkg -P left the service enabled"
ok "dpkg -P removes the store, the config, the user and the enablement"

echo "deb-test: $passed passed, 0 failed"
