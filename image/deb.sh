#!/usr/bin/env bash
# deb.sh — a .deb of questbox for an existing Debian or Raspberry Pi OS.
#
#   image/deb.sh ARCH...        ARCH: arm64, armhf, amd64
#
# Writes dist/questbox_<version>_<arch>.deb from dist/questbox-linux-<go
# arch> (arm64; armhf takes the armv6 build, so one package runs on every
# Pi from the Zero on; amd64) and dist/questbox.toml, the packaged config.
# No build dependencies beyond dpkg-deb: the tree is laid out here and
# built with --root-owner-group.
#
# The package: /usr/bin/questbox, questbox.service, the udev rule, the
# config as a conffile (/etc/questbox/questbox.toml), the release public key
# (/etc/questbox/release.pub, from RELEASE_PUB; replaced on upgrade, not a
# conffile), the README; the
# maintainer scripts in image/deb/ make the questbox user (in group gpio),
# enable and start the service where systemd runs, stop it before removal,
# and delete the store only on purge.
#
# Environment: VERSION (default: from git describe, made a Debian version),
# RELEASE_PUB (default dist/release.pub).
set -euo pipefail

cd "$(dirname "$0")/.."
log() { printf 'deb: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

(($# > 0)) || set -- arm64 armhf
CONF=dist/questbox.toml
[[ -f $CONF ]] || die "$CONF missing: make dist/questbox.toml"
# The release public key (make release writes it): `questbox update` checks
# releases against /etc/questbox/release.pub. Without it the package
# installs, and questbox update refuses every release until the key is
# put there by hand (README, "Releases").
RELEASE_PUB=${RELEASE_PUB:-dist/release.pub}
[[ -f $RELEASE_PUB ]] || log "warning: $RELEASE_PUB missing: the package has no release key, questbox update will refuse every release"

# A Debian version must start with a digit: v1.2.3 -> 1.2.3; an untagged
# tree -> 0~git<commit time>.<hash>; a dirty tree gets +dirty.
debversion() {
	local v=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
	local dirty=
	[[ $v == *-dirty ]] && dirty=+dirty v=${v%-dirty}
	if [[ $v =~ ^v?([0-9]+(\.[0-9]+)+.*)$ ]]; then
		v=${BASH_REMATCH[1]}
		v=${v//-/+}
	else
		v=0~git$(git log -1 --format=%cd --date=format:%Y%m%d%H%M 2>/dev/null || date +%Y%m%d%H%M).${v//[^a-zA-Z0-9.+~]/.}
	fi
	echo "$v$dirty"
}
version=$(debversion)

for arch in "$@"; do
	case $arch in
	arm64) bin=dist/questbox-linux-arm64 ;;
	armhf) bin=dist/questbox-linux-armv6 ;;
	amd64) bin=dist/questbox-linux-amd64 ;;
	*) die "unknown architecture $arch (arm64, armhf, amd64)" ;;
	esac
	[[ -x $bin ]] || die "$bin missing: make $bin"
	tree=$(mktemp -d)
	chmod 0755 "$tree"
	trap 'rm -rf "$tree"' EXIT
	install -D -m 0755 "$bin" "$tree/usr/bin/questbox"
	install -D -m 0644 systemd/questbox.service "$tree/lib/systemd/system/questbox.service"
	install -D -m 0644 systemd/60-questbox.rules "$tree/lib/udev/rules.d/60-questbox.rules"
	install -D -m 0644 "$CONF" "$tree/etc/questbox/questbox.toml"
	if [[ -f $RELEASE_PUB ]]; then
		install -D -m 0644 "$RELEASE_PUB" "$tree/etc/questbox/release.pub"
	fi
	install -D -m 0644 README.md "$tree/usr/share/doc/questbox/README.md"
	install -d -m 0755 "$tree/DEBIAN"
	install -m 0755 image/deb/postinst image/deb/prerm image/deb/postrm "$tree/DEBIAN/"
	echo /etc/questbox/questbox.toml >"$tree/DEBIAN/conffiles"
	cat >"$tree/DEBIAN/control" <<EOF
Package: questbox
Version: $version
Architecture: $arch
Maintainer: questbox maintainers <questbox@localhost>
Installed-Size: $(du -sk --exclude=DEBIAN "$tree" | cut -f1)
Depends: adduser
Suggests: avahi-daemon
Section: misc
Priority: optional
Description: research quests on a Raspberry Pi, checked by gates
 questbox runs agent quests under a ratchet: every answer passes rule
 gates before it is locked, the box's LEDs and button show progress and
 ask for consent, and a dashboard and MQTT report it. One static binary:
 the daemon (questbox.service, sandboxed) and its command line.
EOF
	out=dist/questbox_${version}_${arch}.deb
	dpkg-deb --build --root-owner-group -Zxz "$tree" "$out" >/dev/null
	rm -rf "$tree"
	trap - EXIT
	log "$out ($(du -h "$out" | cut -f1))"
done
