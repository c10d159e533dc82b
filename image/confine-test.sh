# confine-test.sh — sourced by image/test.sh: the attacking agent of
# scripts/attack-agent.sh on the booted test copy, under the image's own
# systemd unit (user questbox, its sandbox), as docs/confinement-check.md
# does it by hand.
#
#   confine_check N    in boot N, with questbox running on the sim backend
#
# Two quests, each with a project directory under /srv/qb-confine/work
# (writable by questbox through a drop-in in /run, as the README's project
# drop-in does it), run the script as their command agent:
#
#   - "local", of a provider of vendor local: its quest's egress is local
#     only, so its agent must not reach a non-local address;
#   - "hosted", of a provider of vendor anthropic, on a quest whose egress
#     allows anthropic: its agent may reach the network.
#
# The non-local address is 203.0.113.7 (TEST-NET-3) on a dummy interface
# of the guest, where the dashboard answers (the image listens on :8080).
# Each agent tries the attempts of attack-agent.sh and that address: only
# writing in its project works (and the network for "hosted"); its marker
# child is gone once its run is recorded; no escape file appears (in
# /srv/qb-confine/work, /tmp, the service's private /tmp, /dev/shm or the
# data directory); the daemon keeps its pid, the runs end answered and
# PASS, and the store verifies. The test copy's config, drop-in and
# interface are put back as they were, and its store too (a backup taken
# before the runs, restored by the daemon): the two quests end terminated
# (their one agent run spent), which lights the red LED for good, and the
# checks that follow expect an idle box.
#
# Uses test.sh's log, ok, fail, ssh_ and $work, and jq (update_prepare
# installs it). Every wait is bounded by CONFINE_TIMEOUT (default 900 s).

CONFINE_TIMEOUT=${CONFINE_TIMEOUT:-900}
confine_base=/srv/qb-confine
confine_addr=203.0.113.7
# What attack-agent.sh records besides write-project and marker; each must
# be denied (network: for the local quest only).
confine_attacks="read-db append-db read-password list-data control-socket read-config write-parent write-tmp write-shm write-data proc-environ proc-fd proc-root proc-cwd proc-map-files symlink-read symlink-list signal-daemon"

# confine_check N: in boot N.
confine_check() {
	local n=$1 t0=$SECONDS token pid restarts q_local q_hosted deadline show
	token=qb$RANDOM$RANDOM$RANDOM

	# --- the stage --------------------------------------------------------
	ssh_ "mkdir -p $confine_base && cat >$confine_base/attack-agent.sh && chmod 0755 $confine_base $confine_base/attack-agent.sh" \
		<scripts/attack-agent.sh || fail "boot $n: confine: could not copy attack-agent.sh"
	ssh_ bash -s <<-EOF || fail "boot $n: confine: could not set up the projects, the providers and $confine_addr"
		set -euo pipefail
		base=$confine_base
		mkdir -p "\$base/work/local" "\$base/work/hosted"
		chown questbox:questbox "\$base/work" "\$base/work/local" "\$base/work/hosted"
		chmod 0755 "\$base/work" "\$base/work/local" "\$base/work/hosted"
		cp -p /etc/questbox/questbox.toml "\$base/questbox.toml.orig"
		for p in local hosted; do
			vendor=local
			[ \$p = hosted ] && vendor=anthropic
			printf '\n[providers.attacker-%s]\ntype = "command"\nvendor = "%s"\nenv = ["PATH"]\ntimeout = "10m"\nargv = ["sh", "%s", "%s", "/var/lib/questbox", "/etc/questbox/questbox.toml", "/usr/bin/questbox", "%s", "%s"]\n' \
				"\$p" "\$vendor" "\$base/attack-agent.sh" "\$base/work/\$p" "$token" "$confine_addr:8080" >>/etc/questbox/questbox.toml
		done
		questbox run --check-config --config /etc/questbox/questbox.toml >/dev/null
		mkdir -p /run/systemd/system/questbox.service.d
		printf '[Service]\nReadWritePaths=%s\n' "\$base/work" >/run/systemd/system/questbox.service.d/zz-confine-test.conf
		systemctl daemon-reload
		modprobe dummy
		ip link add qbdummy0 type dummy
		ip addr add $confine_addr/24 dev qbdummy0
		ip link set qbdummy0 up
	EOF
	ssh_ timeout "$CONFINE_TIMEOUT" systemctl restart questbox.service ||
		fail "boot $n: confine: questbox did not start with the attackers: $(ssh_ journalctl -u questbox -o cat | tail -20)"
	ssh_ curl -sf --max-time 20 "http://$confine_addr:8080/healthz" >/dev/null ||
		fail "boot $n: confine: the dashboard does not answer on $confine_addr:8080 from the box itself"
	pid=$(ssh_ systemctl show -p MainPID --value questbox.service)
	restarts=$(ssh_ systemctl show -p NRestarts --value questbox.service)
	# The agents know the daemon's pid: the worst case.
	ssh_ "for p in local hosted; do echo $pid >$confine_base/work/\$p/daemon.pid; chown questbox:questbox $confine_base/work/\$p/daemon.pid; done"
	ok "boot $n: confine: two attacking agents configured, $confine_addr:8080 answers on a dummy interface, daemon pid $pid"
	ssh_ questbox backup --out $confine_base/store-before.db >/dev/null ||
		fail "boot $n: confine: questbox backup of the store before the runs failed"

	# --- the runs ---------------------------------------------------------
	# ssh joins its arguments into one line for the remote shell: each
	# direction is quoted for that shell, or it splits into words.
	q_local=$(ssh_ questbox quest new confine-local --direction "'find out what a local-only agent may touch'" \
		--provider attacker-local --mode solo --max-tries 1 --max-agent-runs 1 --project "$confine_base/work/local") ||
		fail "boot $n: confine: quest new (local): $q_local"
	q_hosted=$(ssh_ questbox quest new confine-hosted --direction "'find out what a hosted agent may touch'" \
		--provider attacker-hosted --mode solo --max-tries 1 --max-agent-runs 1 --egress anthropic,local --project "$confine_base/work/hosted") ||
		fail "boot $n: confine: quest new (hosted): $q_hosted"
	deadline=$((SECONDS + CONFINE_TIMEOUT))
	until confine_ran "$q_local" && confine_ran "$q_hosted"; do
		((SECONDS < deadline)) || fail "boot $n: confine: the attacking agents' runs did not end within ${CONFINE_TIMEOUT}s: $(ssh_ questbox runs)"
		# A quest that sends its material off the box may wait for one
		# consent first: the virtual button's long press gives it.
		show=$(ssh_ questbox quest show "$q_hosted" --json) || fail "boot $n: confine: quest show $q_hosted: $show"
		if grep -q '"awaiting_consent"' <<<"$show"; then
			ssh_ questbox device press --hold 2s >/dev/null || fail "boot $n: confine: the long press for $q_hosted's consent was refused"
		fi
		# A tick now rather than at the minute; it waits for its runs.
		ssh_ timeout "$CONFINE_TIMEOUT" questbox tick >/dev/null || true
	done

	# --- what each agent could do ----------------------------------------
	confine_judge "$n" local "$q_local" denied
	confine_judge "$n" hosted "$q_hosted" ok
	local left
	left=$(ssh_ bash -s <<-EOF
		for f in /proc/[0-9]*/cmdline; do
			c=\$(tr '\0' ' ' <"\$f" 2>/dev/null) || continue
			[[ \$c == *qbmark-$token* ]] && echo "\${f%/cmdline}: \$c"
		done
		for f in $confine_base/work/escape-$token /tmp/escape-$token /tmp/systemd-private-*-questbox.service-*/tmp/escape-$token \
			/dev/shm/escape-$token /var/lib/questbox/escape-$token; do
			[ -e "\$f" ] && echo "file \$f"
		done
		true
	EOF
	)
	[[ -z $left ]] || fail "boot $n: confine: the agents left behind:
$left"
	ok "boot $n: confine: no marker process outlived its run; no escape file in the project's parent, /tmp (the box's and questbox's), /dev/shm or the data directory"
	[[ $(ssh_ systemctl show -p MainPID --value questbox.service) == "$pid" && $(ssh_ systemctl is-active questbox.service) == active &&
		$(ssh_ systemctl show -p NRestarts --value questbox.service) == "$restarts" ]] ||
		fail "boot $n: confine: the daemon did not survive its agents: $(ssh_ journalctl -u questbox -o cat | tail -20)"
	ssh_ questbox verify >/dev/null || fail "boot $n: confine: questbox verify failed after the attacks"
	ok "boot $n: confine: the daemon kept its pid $pid, and the store verifies"

	# --- put the box back -------------------------------------------------
	ssh_ bash -s <<-EOF || fail "boot $n: confine: could not put the config, the drop-in and the interface back"
		set -euo pipefail
		cp -p $confine_base/questbox.toml.orig /etc/questbox/questbox.toml
		rm -f /run/systemd/system/questbox.service.d/zz-confine-test.conf
		ip link del qbdummy0
		systemctl daemon-reload
	EOF
	ssh_ timeout "$CONFINE_TIMEOUT" systemctl restart questbox.service ||
		fail "boot $n: confine: questbox did not start again with its own config: $(ssh_ journalctl -u questbox -o cat | tail -20)"
	ssh_ timeout "$CONFINE_TIMEOUT" questbox restore $confine_base/store-before.db >/dev/null ||
		fail "boot $n: confine: questbox restore of the store from before the runs failed: $(ssh_ journalctl -u questbox -o cat | tail -20)"
	local quests
	quests=$(ssh_ questbox quest list)
	! awk -v a="$q_local" -v b="$q_hosted" '$1 == a || $1 == b {found = 1} END {exit !found}' <<<"$quests" ||
		fail "boot $n: confine: the attackers' quests $q_local and $q_hosted are still there after the restore:
$quests"
	ok "boot $n: confine: config, drop-in, interface and store put back ($((SECONDS - t0))s in all)"
}

# confine_ran QUEST: its root node's run has ended (a verdict recorded).
confine_ran() {
	ssh_ questbox runs "$1" --json | jq -e 'length > 0 and all(.[]; .running == false)' >/dev/null
}

# confine_judge N NAME QUEST NETWORK: the run of QUEST ended answered and
# PASS with its verdict locked, and its agent could write its project, ran
# its marker, reached the network as NETWORK says (ok or denied), and was
# denied everything else. The run's log is shown when not.
confine_judge() {
	local n=$1 name=$2 q=$3 network=$4 runs node show evidence got a bad=
	runs=$(ssh_ questbox runs "$q" --json)
	jq -e 'length == 1 and .[0].exit == "answered" and .[0].outcome == "PASS"' >/dev/null <<<"$runs" ||
		fail "boot $n: confine ($name): the run did not end answered and PASS: $runs"
	# The run's own node: node ids count across the store's quests (boot
	# 1's quest has n1), and a quest with egress has its consent node too.
	node=$(jq -r '.[0].node' <<<"$runs")
	show=$(ssh_ questbox quest show "$q" --json)
	jq -e --arg node "$node" '.nodes[] | select(.id == $node) | .status == "aborted" and .verdict == "dead"' >/dev/null <<<"$show" ||
		fail "boot $n: confine ($name): $node is not locked with the agent's verdict: $show"
	evidence=$(jq -r --arg node "$node" '.nodes[] | select(.id == $node) | .evidence' <<<"$show")
	got() { sed -n "s/.* $1=\([a-z-]*\).*/\1/p" <<<" ${evidence#confinement probe:} "; }
	[[ $(got write-project) == ok ]] || bad+=" write-project=$(got write-project)"
	[[ $(got marker) == running ]] || bad+=" marker=$(got marker)"
	[[ $(got network) == "$network" ]] || bad+=" network=$(got network) (want $network)"
	for a in $confine_attacks; do
		[[ $(got "$a") == denied ]] || bad+=" $a=$(got "$a")"
	done
	[[ -z $bad ]] || fail "boot $n: confine ($name): wrong outcomes:$bad
evidence: $evidence
the agent's log:
$(ssh_ questbox logs "$(jq -r '.[0].id' <<<"$runs")" 2>&1 | head -80)"
	ok "boot $n: confine ($name): only its project was written, network $network, $(wc -w <<<"$confine_attacks") attempts denied; run answered, PASS"
}
