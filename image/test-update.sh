# test-update.sh — sourced by image/test.sh: `questbox update` of the booted
# test copy to a newer build, and rollbacks from deliberately broken ones,
# under the image's own systemd (README, "Updating").
#
#   update_prepare    before the first boot: a throwaway release key and the
#                     arm64 builds, each signed with it
#   update_test N     in boot N, once the quest made in boot 1 is checked
#
# The builds are of this tree, like the image's binary (make image-test
# passes its VERSION), as other versions: VERSION-next, and
# VERSION-broken-STAGE for each of the four broken releases of
# internal/daemon/fault_update.go (-tags updatefault, UPDATE_FAULTS):
# start (exits at start), ready (hangs before READY), store (migrates the
# store to a schema no release knows, then exits), after-ready (panics just
# after READY). Only the test copy is changed: its /etc/questbox/release.pub
# becomes the throwaway key's, and a drop-in runs the daemon with
# --update-settle $UPDATE_SETTLE (30s) and --tick $UPDATE_TICK (10s), so
# that a commit takes seconds instead of the default 2m settle plus a
# minute's tick. TimeoutStartSec, RestartSec and the start limit are the
# unit's own.
#
# Uses test.sh's log, ok, fail, ssh_ and $work. Every wait is bounded
# (UPDATE_TIMEOUT, default 900 s per update). Writes
# dist/image-test-update.txt: how long each update took to commit or to
# come back.

UPDATE_SETTLE=${UPDATE_SETTLE:-30s}
UPDATE_TICK=${UPDATE_TICK:-10s}
UPDATE_TIMEOUT=${UPDATE_TIMEOUT:-900}
UPDATE_FAULTS=${UPDATE_FAULTS:-start ready store after-ready}

upd_dir=
upd_base=
upd_next=

# update_prepare builds and signs the releases in $work/release.
update_prepare() {
	local f
	scripts/deps.sh jq
	upd_dir=$work/release
	mkdir -p "$upd_dir"
	"${GO:-go}" build -o "$upd_dir/questbox-release" ./cmd/questbox-release || fail "update: go build ./cmd/questbox-release"
	"$upd_dir/questbox-release" keygen "$upd_dir" >/dev/null || fail "update: questbox-release keygen"
	upd_base=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
	upd_next=$upd_base-next
	upd_build "$upd_next" ""
	for f in $UPDATE_FAULTS; do
		upd_build "$upd_base-broken-$f" "$f"
	done
	ok "update: throwaway release key; $upd_next and $(wc -w <<<"$UPDATE_FAULTS") broken releases built for arm64 and signed with it"
}

# upd_build VERSION FAULT: $upd_dir/questbox-VERSION and its .minisig; a
# broken release when FAULT is a stage of fault_update.go.
upd_build() {
	local v=$1 fault=$2 tags=() ld="-s -w -X main.version=$1"
	if [[ -n $fault ]]; then
		tags=(-tags updatefault)
		ld+=" -X github.com/questbox/questbox/internal/daemon.fault=$fault"
	fi
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 "${GO:-go}" build -trimpath "${tags[@]}" -ldflags "$ld" \
		-o "$upd_dir/questbox-$v" ./cmd/questbox || fail "update: go build $v"
	QUESTBOX_RELEASE_KEY=$upd_dir/release.key "$upd_dir/questbox-release" sign --version "$v" "$upd_dir/questbox-$v" >/dev/null ||
		fail "update: signing $v"
}

# upd_until WHAT SECONDS CMD...: runs CMD every 3 s until it succeeds, or
# fails the test after SECONDS.
upd_until() {
	local what=$1 limit=$2 deadline=$(($(date +%s) + $2))
	shift 2
	until "$@"; do
		(($(date +%s) < deadline)) || fail "update: $what not within ${limit}s: $(upd_diag)"
		sleep 3
	done
}

# upd_diag is what a failure shows: the unit, the update state, the journal.
upd_diag() {
	ssh_ "systemctl status --no-pager -n 0 questbox.service; questbox version; journalctl -u questbox.service -o cat -n 30 --no-pager" 2>&1 || true
}

# upd_running is the version the daemon serving the socket reports on
# /healthz; "" when none answers.
upd_running() {
	ssh_ curl -sf --max-time 10 --unix-socket /run/questbox/questbox.sock http://questbox/healthz 2>/dev/null | jq -r .version 2>/dev/null || true
}

# upd_state is `questbox version --json` on the box (what state.json says).
upd_state() { ssh_ questbox version --json 2>/dev/null || echo '{}'; }

# upd_runs VERSION: questbox.service is active (READY) and its daemon is
# VERSION, with no update on trial.
upd_runs() {
	[[ $(ssh_ systemctl is-active questbox.service 2>/dev/null) == active ]] &&
		[[ $(upd_running) == "$1" ]] &&
		upd_state | jq -e '.trial == null' >/dev/null
}

# upd_committed VERSION: VERSION runs and state.json has committed it.
upd_committed() {
	upd_runs "$1" && upd_state | jq -e --arg v "$1" '.committed == $v and (.last_update // "" | contains("committed"))' >/dev/null
}

# upd_rolled_back VERSION TO: the trial of VERSION was rolled back and TO
# runs again.
upd_rolled_back() {
	upd_state | jq -e --arg v "$1" '.trial == null and (.last_update // "" | startswith("update to " + $v + " rolled back"))' >/dev/null &&
		upd_runs "$2"
}

# upd_send VERSION: the release onto the box, then `questbox update` there.
# Sets upd_t0 (the box's clock when it was sent) and upd_w0 (the host's).
upd_send() {
	local v=$1 out
	ssh_ "cat >/var/tmp/questbox-$v" <"$upd_dir/questbox-$v"
	ssh_ "cat >/var/tmp/questbox-$v.minisig" <"$upd_dir/questbox-$v.minisig"
	upd_t0=$(ssh_ date +%s)
	upd_w0=$(date +%s)
	out=$(ssh_ questbox update "/var/tmp/questbox-$v" 2>&1) || fail "update: questbox update $v: $out"
	grep -qF "questbox $v (linux/arm64) verified and staged" <<<"$out" || fail "update: questbox update $v said: $out"
	grep -qF "the daemon restarts into it" <<<"$out" || fail "update: questbox update $v did not ask the daemon to restart: $out"
}

# upd_journal: questbox.service's journal since upd_t0.
upd_journal() { ssh_ journalctl -u questbox.service --since "@$upd_t0" -o cat --no-pager; }

# upd_want WHAT JOURNAL LINE...: each LINE is in JOURNAL.
upd_want() {
	local what=$1 j=$2 line
	shift 2
	for line in "$@"; do
		grep -qF -- "$line" <<<"$j" || fail "update: $what: the journal lacks '$line':
$(tail -40 <<<"$j")"
	done
}

# upd_data N WHAT: the quest from boot 1 is there and the store verifies,
# through the running daemon.
upd_data() {
	local what=$1 out
	grep -q image-test <<<"$(ssh_ questbox quest list)" || fail "update: $what: the quest from boot 1 is gone: $(ssh_ questbox quest list 2>&1)"
	out=$(ssh_ questbox verify 2>&1) || fail "update: $what: questbox verify failed: $out"
}

update_test() {
	local n=$1 execstart pkg secs j f v said dev fault red files
	: >dist/image-test-update.txt
	pkg=$(upd_state | jq -r .packaged)
	[[ -n $pkg && $pkg != null ]] || fail "update: questbox version --json names no packaged version: $(upd_state)"

	# The test copy trusts the throwaway key and settles quickly.
	ssh_ "cat >/etc/questbox/release.pub && chmod 0644 /etc/questbox/release.pub" <"$upd_dir/release.pub"
	execstart=$(ssh_ systemctl cat questbox.service | sed -n 's/^ExecStart=\(..*\)$/\1/p' | tail -1)
	[[ $execstart == /usr/bin/questbox\ run* ]] || fail "update: questbox.service's ExecStart is '$execstart'"
	ssh_ "mkdir -p /etc/systemd/system/questbox.service.d && cat >/etc/systemd/system/questbox.service.d/update-test.conf" <<EOF
# image-test only (image/test-update.sh): a short settle and tick.
[Service]
ExecStart=
ExecStart=$execstart --update-settle $UPDATE_SETTLE --tick $UPDATE_TICK
EOF
	ssh_ "systemctl daemon-reload && systemctl restart --no-block questbox.service"
	upd_until "questbox back after the drop-in" "$UPDATE_TIMEOUT" upd_runs "$pkg"
	ok "boot $n: update: release.pub is a throwaway key's, the daemon runs with --update-settle $UPDATE_SETTLE --tick $UPDATE_TICK (test copy only)"

	# A newer build: restarted into, committed after the settling time.
	upd_send "$upd_next"
	upd_until "$upd_next committed" "$UPDATE_TIMEOUT" upd_committed "$upd_next"
	secs=$(($(date +%s) - upd_w0))
	j=$(upd_journal)
	upd_want "$upd_next" "$j" "a release is staged; stopping to start it on trial" \
		"starting $upd_next on trial (start 1 of 2" "update: this version is on trial" "update committed"
	upd_data "after $upd_next"
	ok "boot $n: update: questbox update to $upd_next: restarted into it, committed after the ${UPDATE_SETTLE} settle, ${secs}s from questbox update (quest there, verify clean)"
	echo "update $pkg -> $upd_next (settle $UPDATE_SETTLE, tick $UPDATE_TICK): committed ${secs}s after questbox update" >>dist/image-test-update.txt
	grep -qF "kept for rollback: $pkg (packaged)" <<<"$(ssh_ questbox version)" || fail "update: questbox version after the commit: $(ssh_ questbox version)"

	# The broken releases: each comes back to $upd_next by itself.
	for f in $UPDATE_FAULTS; do
		v=$upd_base-broken-$f
		upd_send "$v"
		upd_until "the rollback of $v" "$UPDATE_TIMEOUT" upd_rolled_back "$v" "$upd_next"
		secs=$(($(date +%s) - upd_w0))
		j=$(upd_journal)
		# A try that never became READY ends the trial at once; one that
		# was READY and then crashed gets its second start.
		case $f in
		after-ready)
			upd_want "$v" "$j" "starting $v on trial (start 1 of 2" "starting $v on trial (start 2 of 2" \
				"update to $v rolled back to $upd_next: it started 2 times without becoming ready and healthy for the settling time; the store is as it was before the update"
			;;
		*)
			upd_want "$v" "$j" "starting $v on trial (start 1 of 2" \
				"update to $v rolled back to $upd_next: its start 1 of 2 did not become ready (it exited, crashed, hung or was stopped before READY); the store is as it was before the update"
			grep -qF "starting $v on trial (start 2 of 2" <<<"$j" && fail "update: $v: a try that never became READY was given a second start:
$(tail -40 <<<"$j")"
			;;
		esac
		case $f in
		start) upd_want "$v" "$j" "fault: exit at start" "Main process exited, code=exited, status=1/FAILURE" ;;
		ready) upd_want "$v" "$j" "operation timed out" "SIGABRT: abort" ;;
		store) upd_want "$v" "$j" "fault: migrated the store, then crash" ;;
		after-ready) upd_want "$v" "$j" "panic: fault: panic after READY" ;;
		esac
		grep -q "update committed" <<<"$j" && fail "update: $v: the journal says it was committed:
$(tail -40 <<<"$j")"
		upd_data "after $v"
		said=$(ssh_ questbox version | grep '^last update:') || fail "update: questbox version says no last update after $v"
		grep -qF "rolled back to $upd_next" <<<"$said" || fail "update: questbox version after $v: $said"
		dev=$(ssh_ questbox device status --json)
		fault=$(jq -r '.state.fault // ""' <<<"$dev")
		red=$(jq -r '.red.pattern' <<<"$dev")
		[[ $fault == *"update rolled back"* ]] || fail "update: $v: the LEDs do not show the rollback: $dev"
		files=$(ssh_ ls /var/lib/questbox/bin)
		grep -q "$v\|\.pre-" <<<"$files" && fail "update: $v: left in /var/lib/questbox/bin: $files"
		ok "boot $n: update: $v ($f) rolled back to $upd_next by itself ${secs}s after questbox update; quest there, verify clean; journal and questbox version say why; LEDs: red $red, fault '$fault'"
		echo "broken $f ($v): back on $upd_next ${secs}s after questbox update" >>dist/image-test-update.txt
	done
	log "$(ssh_ questbox version)"
	log "starts of questbox.service in boot $n: $(ssh_ systemctl show -p NRestarts --value questbox.service) restarts"
}
