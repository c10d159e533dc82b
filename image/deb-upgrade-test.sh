#!/usr/bin/env bash
# deb-upgrade-test.sh — the .deb across versions: install the
# previous version's package in a scratch Debian root, make data with it,
# upgrade to the current package, check the data, then install the
# previous package again and check that its binary refuses the upgraded
# store with a clear message and leaves it as it was (README "Releases,
# store schemas and going back").
#
#   image/deb-upgrade-test.sh [DEB]   default: the newest dist/questbox_*_<arch>.deb
#
# The previous package is built from QUESTBOX_PREV (default: the newest
# release tag v0.N.0 that is not on HEAD; f5197e4, the last commit of
# store schema 4, in a clone without tags) in a temporary git worktree,
# with that tree's own image/deb.sh. Its version sorts before the current
# one, so dpkg sees an upgrade, then a downgrade. The schemas are read
# from the stores, not written here: when the current version's schema is
# newer, the upgrade must raise it and the previous binary must refuse the
# newer store by name; when both versions share a schema (no store change
# since that release), the upgrade must keep it and the previous binary
# must read the store as it was. The scratch root is deb-test.sh's.
set -euo pipefail

cd "$(dirname "$0")/.."
log() { printf 'deb-upgrade-test: %s\n' "$*" >&2; }
fail() { log "FAIL: $*"; exit 1; }

arch=$(dpkg --print-architecture)
deb=${1:-$(ls -t dist/questbox_*_"$arch".deb 2>/dev/null | head -1)}
[[ -f $deb ]] || fail "no dist/questbox_*_$arch.deb: image/deb.sh $arch"
deb=$(realpath "$deb")
prevtag=$(git tag --list 'v0.*.0' --sort=-v:refname --no-contains HEAD 2>/dev/null | head -1)
prev=${QUESTBOX_PREV:-${prevtag:-f5197e4}}

if [[ -z ${QUESTBOX_PREV_DEB:-} ]]; then
	scripts/deps.sh mmdebstrap debian-archive-keyring
	out=dist/prev
	mkdir -p "$out"
	tmp=$(mktemp -d)
	trap 'git worktree remove --force "$tmp/tree" 2>/dev/null || true; rm -rf "$tmp"' EXIT
	git worktree add --detach "$tmp/tree" "$prev" >/dev/null 2>&1 || fail "git worktree add $prev"
	log "building the previous package from $prev"
	(cd "$tmp/tree" && make --no-print-directory "dist/questbox-linux-$arch" dist/questbox.toml >/dev/null && image/deb.sh "$arch") >&2
	rm -f "$out"/questbox_*_"$arch".deb
	cp "$tmp/tree"/dist/questbox_*_"$arch".deb "$out/"
	git worktree remove --force "$tmp/tree"
	rm -rf "$tmp"
	trap - EXIT
	export QUESTBOX_PREV_DEB=$(realpath "$(ls "$out"/questbox_*_"$arch".deb)")
fi
prevdeb=$QUESTBOX_PREV_DEB

source image/debroot.sh
debroot_userns "$deb"
debroot_unpack
cp "$prevdeb" "$root/tmp/prev.deb"
cp "$deb" "$root/tmp/cur.deb"
inroot() { chroot "$root" "$@"; }
# The CLI as the service's user, on the packaged config (no daemon runs in
# the chroot: each verb opens the store itself).
qb() { chroot "$root" runuser -u questbox -- questbox --data /var/lib/questbox "$@"; }
passed=0
ok() { log "ok: $*"; passed=$((passed + 1)); }
answer() { printf 'My findings.\n```json\n{"verdict":"%s","evidence":"%s","citations":[],"new_directions":[]}\n```\n' "$1" "$2"; }
field() { grep -o "\"$1\": *[0-9]*" | head -1 | grep -o '[0-9]*$'; }

# 1. the previous package, and data made with it
inroot dpkg -i /tmp/prev.deb >"$root/tmp/prev.log" 2>&1 || { cat "$root/tmp/prev.log" >&2; fail "dpkg -i the previous package"; }
prevver=$(inroot dpkg-query -W -f='${Version}' questbox)
inroot install -d -o questbox -g questbox -m 0750 /var/lib/questbox
qb quest new upgrade --direction "data made by the previous version" --provider external --mode solo >/dev/null
qb scan q1 "alpha survives the upgrade" "beta is a dead end" "gamma stays pending" >/dev/null
answer promising "alpha works on all twenty samples." | qb submit q1 --node n1 --in - >/dev/null || true
answer dead "beta fails on every sample." | qb submit q1 --node n2 --in - >/dev/null || true
qb export q1 --out /tmp/export.jsonl >/dev/null
qb verify --json >"$root/tmp/verify-prev.json" || fail "verify with the previous version"
records=$(field records <"$root/tmp/verify-prev.json")
locked=$(field locked_nodes <"$root/tmp/verify-prev.json")
((records > 0 && locked == 2)) || fail "the previous version's data: $(cat "$root/tmp/verify-prev.json")"
qb quest show q1 --json | grep -o '"id": "n[0-9]*"\|"status": "[a-z_]*"' >"$root/tmp/nodes-prev.txt"
ok "$prevver installed; a quest with $locked locked nodes and $records ledger records"

# 2. upgrade: the data is there, migrated at the first writing command
inroot dpkg -i /tmp/cur.deb >"$root/tmp/cur.log" 2>&1 || { cat "$root/tmp/cur.log" >&2; fail "dpkg -i the current package over the previous one"; }
curver=$(inroot dpkg-query -W -f='${Version}' questbox)
[[ $curver != "$prevver" ]] || fail "the upgrade kept version $prevver"
grep -q 'Unpacking questbox .*over' "$root/tmp/cur.log" || fail "dpkg did not upgrade: $(cat "$root/tmp/cur.log")"
qb export q1 --out /tmp/export.jsonl >/dev/null 2>"$root/tmp/export2.log" || fail "export after the upgrade: $(cat "$root/tmp/export2.log")"
grep -q 'exported 0 nodes' "$root/tmp/export2.log" || fail "after the upgrade export wrote again: $(cat "$root/tmp/export2.log")"
qb verify --json >"$root/tmp/verify-cur.json" || fail "verify after the upgrade"
prevschema=$(field schema <"$root/tmp/verify-prev.json")
curschema=$(field schema <"$root/tmp/verify-cur.json")
[[ -n $prevschema && -n $curschema ]] && ((curschema >= prevschema)) && [[ $(field records <"$root/tmp/verify-cur.json") == "$records" && $(field locked_nodes <"$root/tmp/verify-cur.json") == "$locked" ]] ||
	fail "after the upgrade: $(cat "$root/tmp/verify-cur.json")"
qb quest show q1 --json | grep -o '"id": "n[0-9]*"\|"status": "[a-z_]*"' >"$root/tmp/nodes-cur.txt"
cmp -s "$root/tmp/nodes-prev.txt" "$root/tmp/nodes-cur.txt" || fail "nodes changed by the upgrade: $(diff "$root/tmp/nodes-prev.txt" "$root/tmp/nodes-cur.txt")"
if ((curschema > prevschema)); then
	ok "upgraded to $curver: the store migrated from schema $prevschema to $curschema; the quest, its nodes, $records ledger records and the export cursor are as they were"
else
	ok "upgraded to $curver: the store kept schema $curschema (the same as $prevver's); the quest, its nodes, $records ledger records and the export cursor are as they were"
fi

# 3. downgrade: the previous binary refuses a newer store, changing
# nothing, and reads a store of its own schema as it was
sum=$(sha256sum <"$root/var/lib/questbox/questbox.db")
inroot dpkg -i /tmp/prev.deb >"$root/tmp/down.log" 2>&1 || { cat "$root/tmp/down.log" >&2; fail "dpkg -i the previous package over the current one"; }
if ((curschema == prevschema)); then
	qb verify --json >"$root/tmp/verify-down.json" || fail "verify with $prevver after the upgrade: $(cat "$root/tmp/verify-down.json")"
	[[ $(field records <"$root/tmp/verify-down.json") == "$records" && $(field locked_nodes <"$root/tmp/verify-down.json") == "$locked" ]] ||
		fail "$prevver after the upgrade: $(cat "$root/tmp/verify-down.json")"
	qb quest show q1 --json | grep -o '"id": "n[0-9]*"\|"status": "[a-z_]*"' >"$root/tmp/nodes-down.txt"
	cmp -s "$root/tmp/nodes-prev.txt" "$root/tmp/nodes-down.txt" || fail "$prevver reads other nodes: $(diff "$root/tmp/nodes-prev.txt" "$root/tmp/nodes-down.txt")"
	ok "downgraded to $prevver: the schema $curschema store verifies and reads as it was"
else
	for verb in "verify" "quest list" "quest new x --direction y --provider external"; do
		set +e
		qb $verb >/dev/null 2>"$root/tmp/refused.log"
		rc=$?
		set -e
		((rc == 2)) || fail "the previous version's '$verb' on the upgraded store: exit $rc, want 2: $(cat "$root/tmp/refused.log")"
		grep -q "has schema v$curschema, this questbox knows v$prevschema; upgrade questbox" "$root/tmp/refused.log" ||
			fail "the previous version's '$verb' did not say why: $(cat "$root/tmp/refused.log")"
	done
	[[ $(sha256sum <"$root/var/lib/questbox/questbox.db") == "$sum" ]] || fail "the previous version changed the upgraded store"
	ok "downgraded to $prevver: it refuses the schema $curschema store (exit 2, 'has schema v$curschema, this questbox knows v$prevschema; upgrade questbox') and changes nothing"
fi

# 4. upgrade again: all there
inroot dpkg -i /tmp/cur.deb >/dev/null 2>&1 || fail "dpkg -i the current package again"
qb verify --json >"$root/tmp/verify-again.json" || fail "verify after upgrading again"
[[ $(field records <"$root/tmp/verify-again.json") == "$records" ]] || fail "after upgrading again: $(cat "$root/tmp/verify-again.json")"
ok "upgraded again: the store verifies, as it was"

echo "deb-upgrade-test: $passed passed, 0 failed"
