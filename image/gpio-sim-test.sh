# gpio-sim-test.sh — sourced by image/test.sh: questbox's LEDs and button
# on kernel GPIO lines, in the booted test copy of the image.
#
# The kernel's GPIO simulator (gpio-sim.ko, built for the image's kernel by
# image/gpio-sim.sh) is copied into the running test copy over ssh, to
# /run, and loaded there: the image itself never carries it. Through
# configfs it makes one chip laid out like a Raspberry Pi 4's: labelled
# pinctrl-bcm2711 like the Pi's pin controller, with the 58 line names of
# the Pi 4's device tree from the image's own boot partition
# (bcm2711-rpi-4-b.dtb: GPIO17, GPIO27, GPIO22 and GPIO23 among them, at
# their BCM offsets). udev and the unit's own sandbox decide whether the
# daemon may open it (60-questbox.rules, DeviceAllow=char-gpiochip,
# SupplementaryGroups=gpio). questbox is restarted with `--gpio periph`
# through a drop-in in /run (gone at the next boot), and then:
#
#   - the LED lines, read back through gpio-sim's sysfs
#     (sim_gpioN/value, sampled for a few seconds), show the patterns
#     `questbox device status` names, and the ones the README promises:
#     idle green solid and red off, a pending consent amber blinking 2 Hz;
#   - the daemon's pull-up reached the button line (sim_gpio23/pull);
#   - pulling the button line low (sim_gpio23/pull = pull-down, as a
#     pressed button to ground does) for 3 s approves a checkpoint node,
#     and three quick pulls reject the next one: the nodes' states are
#     read through the CLI, the presses from the daemon's journal;
#   - `questbox selftest` with the green LED on BCM 4, a line the device
#     tree names GPIO_GCLK, lights line 4.
#
# A press is a person's gesture, so the guest holds the line for a given
# time (bash's read -t on a fifo: no fork to skew it); everything else
# waits for a condition, bounded by GPIOSIM_TIMEOUT (default 300 s).
#
# Uses test.sh's log, ok, fail, $work, $sshport, $kernel and $fat (the test copy's
# boot partition, for mtools).

GPIOSIM_TIMEOUT=${GPIOSIM_TIMEOUT:-300}
gpiosim_label=pinctrl-bcm2711
gpiosim_dtb=bcm2711-rpi-4-b.dtb
gpiosim_node=/soc/gpio@7e200000
# The image's config leaves [gpio] at its defaults (README, "LEDs and the
# button"): BCM 17, 27, 22 and 23.
gpiosim_green=17 gpiosim_amber=27 gpiosim_red=22 gpiosim_button=23

# gpiosim_prepare: before the boot: the module for the kernel the test
# boots ($work/vmlinuz), and the Pi 4's line names from the boot partition.
gpiosim_prepare() {
	local t0=$SECONDS
	scripts/deps.sh device-tree-compiler || fail "gpio-sim: could not install device-tree-compiler (fdtget)"
	gpiosim_ko=$(image/gpio-sim.sh "$work/vmlinuz") || fail "gpio-sim: no module for ${kernel#vmlinuz-} (image/gpio-sim.sh)"
	mcopy -i "$fat" "::/$gpiosim_dtb" "$work/$gpiosim_dtb" || fail "gpio-sim: no $gpiosim_dtb on the boot partition"
	read -r -a gpiosim_names <<<"$(fdtget -t s "$work/$gpiosim_dtb" "$gpiosim_node" gpio-line-names)"
	((${#gpiosim_names[@]} == 58)) || fail "gpio-sim: $gpiosim_dtb names ${#gpiosim_names[@]} lines of $gpiosim_node, want 58"
	local want
	for want in $gpiosim_green $gpiosim_amber $gpiosim_red $gpiosim_button; do
		[[ ${gpiosim_names[want]} == "GPIO$want" ]] || fail "gpio-sim: line $want of $gpiosim_dtb is '${gpiosim_names[want]}', not GPIO$want"
	done
	ok "gpio-sim: $(basename "$gpiosim_ko") for Linux ${kernel#vmlinuz-} ($((SECONDS - t0))s); 58 line names from $gpiosim_dtb"
}

# gpiosim_check N: in boot N, with questbox running.
gpiosim_check() {
	local n=$1 t0=$SECONDS chip dev sys q nodes n1 n2 presses

	# --- the chip --------------------------------------------------------
	gpiosim_ssh 'cat >/run/gpio-sim.ko' <"$gpiosim_ko"
	chip=$(gpiosim_ssh bash -s -- "$gpiosim_label" "${gpiosim_names[@]}" <<-'EOF'
		set -euo pipefail
		label=$1
		shift
		modprobe configfs
		mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
		insmod /run/gpio-sim.ko
		d=/sys/kernel/config/gpio-sim/pi
		mkdir "$d" "$d/bank0"
		echo "$label" >"$d/bank0/label"
		echo $# >"$d/bank0/num_lines"
		i=0
		for name; do
			mkdir "$d/bank0/line$i"
			echo "$name" >"$d/bank0/line$i/name"
			i=$((i + 1))
		done
		echo 1 >"$d/live"
		echo "$(cat "$d/dev_name") $(cat "$d/bank0/chip_name")"
	EOF
	) || fail "boot $n: gpio-sim: could not load the module or make the chip: $(gpiosim_ssh dmesg | grep -i gpio | tail -5)"
	read -r dev chip <<<"$chip"
	sys=/sys/devices/platform/$dev/$chip
	gpiosim_ssh test -e "$sys/sim_gpio$gpiosim_button/pull" || fail "boot $n: gpio-sim: no $sys/sim_gpio$gpiosim_button"
	ok "boot $n: gpio-sim loaded; /dev/$chip is $gpiosim_label, ${#gpiosim_names[@]} lines named like the Pi 4's"

	# udev gives the chip to the gpio group (60-questbox.rules); the unit's
	# sandbox must let the daemon open it.
	gpiosim_ssh udevadm settle --timeout=120 || fail "boot $n: udev did not settle"
	local mode
	mode=$(gpiosim_ssh stat -c %G:%a "/dev/$chip")
	[[ $mode == gpio:660 ]] || fail "boot $n: /dev/$chip is $mode, want gpio:660 (60-questbox.rules)"
	ok "boot $n: /dev/$chip is group gpio, mode 0660 (60-questbox.rules)"

	# --- the daemon on the chip -----------------------------------------
	local exec
	exec=$(gpiosim_ssh systemctl cat questbox.service | sed -n 's/^ExecStart=\(.\)/\1/p' | tail -1)
	[[ $exec == *" run "* ]] || fail "boot $n: questbox.service's ExecStart is '$exec'"
	# zz-: drop-ins apply in the order of their names, whatever their
	# directory; this one must come after test-update.sh's update-test.conf.
	gpiosim_ssh bash -s <<-EOF
		set -euo pipefail
		mkdir -p /run/systemd/system/questbox.service.d
		printf '[Service]\nExecStart=\nExecStart=%s --gpio periph\n' '$exec' >/run/systemd/system/questbox.service.d/zz-gpio-sim.conf
		systemctl daemon-reload
	EOF
	# The daemon's journal from here on.
	local journal
	journal="journalctl -u questbox -o cat --since @$(gpiosim_ssh date +%s)"
	gpiosim_ssh timeout "$GPIOSIM_TIMEOUT" systemctl restart questbox.service ||
		fail "boot $n: questbox --gpio periph did not start on gpio-sim: $(gpiosim_ssh "$journal" | tail -20)"
	local status
	status=$(gpiosim_ssh questbox device status)
	grep -q '^backend: periph$' <<<"$status" || fail "boot $n: questbox --gpio periph on gpio-sim:
$status"
	grep -q 'device: using GPIO pins' <<<"$(gpiosim_ssh "$journal")" || fail "boot $n: no 'device: using GPIO pins' in the journal"
	ok "boot $n: questbox restarted with --gpio periph: backend periph, on the lines of /dev/$chip"

	# The bias the daemon asked for reached the kernel: the button line
	# is pulled up and reads high (not pressed).
	local pull
	pull=$(gpiosim_ssh cat "$sys/sim_gpio$gpiosim_button/pull" "$sys/sim_gpio$gpiosim_button/value" | paste -sd' ')
	[[ $pull == "pull-up 1" ]] || fail "boot $n: the button line is '$pull', want 'pull-up 1' (the daemon's pull-up)"
	ok "boot $n: the button line GPIO$gpiosim_button is pulled up by the daemon and reads 1"

	# --- the LEDs, idle -----------------------------------------------------
	gpiosim_wait "boot $n: the box to leave its start-up chase" "questbox device status | grep '^state: ' | grep -qv '^state: starting\$'"
	gpiosim_leds "$n" "$sys" idle
	[[ $gpiosim_seen == *"green=solid "* && $gpiosim_seen == *"red=off"* ]] ||
		fail "boot $n: idle, the lines show $gpiosim_seen; the README promises green solid, red off"
	ok "boot $n: idle: the LED lines read $gpiosim_seen, as device status says and the README promises ($gpiosim_stats)"

	# --- a consent: amber ---------------------------------------------------
	q=$(gpiosim_ssh "questbox quest new gpio-sim --direction 'a human checks every scout' --provider external --checkpoint scout")
	[[ $q == q* ]] || fail "boot $n: quest new printed '$q'"
	nodes=$(gpiosim_ssh questbox scan "$q" "'alpha first'" "'beta second'" | sed -n 's/^added 2: //p')
	read -r n1 n2 <<<"$nodes"
	[[ -n $n1 && -n $n2 ]] || fail "boot $n: scan $q added '$nodes', want two nodes"
	gpiosim_submit "$n" "$q" "$n1"
	gpiosim_wait "boot $n: amber to show the consent for $n1" "questbox device status | grep -q '^amber .* blink 2Hz '"
	gpiosim_leds "$n" "$sys" "consent pending"
	[[ $gpiosim_seen == *"amber=blink 2Hz "* ]] ||
		fail "boot $n: a consent is pending, the lines show $gpiosim_seen; the README promises amber blinking 2 Hz"
	ok "boot $n: consent pending: the LED lines read $gpiosim_seen ($gpiosim_stats)"

	# --- the button: a long press approves ----------------------------------
	gpiosim_press "$n" "$sys" long 3
	gpiosim_wait "boot $n: the long press to approve $n1" \
		"questbox quest show $q | $(gpiosim_row "$n1") | grep -qE '^(growing|explored) '"
	gpiosim_wait "boot $n: the long press in the journal" \
		"$journal | grep -q 'device press  long approved $n1'"
	ok "boot $n: GPIO$gpiosim_button held low 3 s: long press, $n1 approved ($(gpiosim_node "$q" "$n1"))"

	# --- a triple press rejects ---------------------------------------------
	gpiosim_submit "$n" "$q" "$n2"
	gpiosim_wait "boot $n: amber to show the consent for $n2" "questbox device status | grep -q '^amber .* blink 2Hz '"
	gpiosim_press "$n" "$sys" triple 0.2
	gpiosim_wait "boot $n: the triple press to reject $n2" \
		"questbox quest show $q | $(gpiosim_row "$n2") | grep -qE '^(pending|running) 1/'"
	gpiosim_wait "boot $n: the triple press in the journal" \
		"$journal | grep -q 'device press  triple rejected $n2'"
	grep -q 'rejected by human' <<<"$(gpiosim_ssh questbox quest show "$q")" || fail "boot $n: $n2 has no feedback 'rejected by human'"
	gpiosim_wait "boot $n: the consent queue to empty" "questbox device status | grep -q '^consents pending: none\$'"
	ok "boot $n: GPIO$gpiosim_button pulled low three times: triple press, $n2 rejected ($(gpiosim_node "$q" "$n2"), 'rejected by human')"
	presses=$(gpiosim_ssh "$journal" | grep 'device press ' || true)
	(($(grep -c . <<<"$presses") == 2)) || fail "boot $n: the journal has these presses, want a long and a triple:
$presses"
	# --- a header pin Debian's device tree names by its function ----------
	# BCM 4 is line 4, named GPIO_GCLK: selftest must find it by its
	# offset and light it.
	local bcm=4 out
	out=$(gpiosim_ssh bash -s -- "$sys" "$bcm" <<-'EOF'
		set -euo pipefail
		sys=$1 bcm=$2
		dir=$(mktemp -d /run/gpio-sim-selftest.XXXXXX)
		printf '[gpio]\ngreen = %d\namber = -1\nred = -1\nbutton = -1\n' "$bcm" >"$dir/questbox.toml"
		mkfifo "$dir/tick"
		exec 3<>"$dir/tick"
		timeout 120 questbox selftest --gpio periph --config "$dir/questbox.toml" --data "$dir" >"$dir/out" 2>&1 &
		pid=$!
		lit=0
		while kill -0 "$pid" 2>/dev/null; do
			read -r v <"$sys/sim_gpio$bcm/value"
			((v == 0)) || lit=1
			read -r -t 0.05 -u 3 || true
		done
		rc=0
		wait "$pid" || rc=$?
		cat "$dir/out"
		echo "exit $rc, line $bcm lit $lit"
	EOF
	) || fail "boot $n: could not run selftest"
	[[ $out == *"green LED on GPIO$bcm (BCM $bcm): lit"* && $out == *"exit 0, line $bcm lit 1" ]] ||
		fail "boot $n: selftest with the green LED on BCM $bcm (line ${gpiosim_names[bcm]}):
$out"
	ok "boot $n: selftest lit the green LED on BCM $bcm, line $bcm named ${gpiosim_names[bcm]} in the Pi 4's device tree"

	gpiosim_time=$((SECONDS - t0))
	ok "boot $n: gpio-sim checks took ${gpiosim_time}s"
	gpiosim_ssh -O exit 2>/dev/null || true
}

# gpiosim_ssh COMMAND...: runs COMMAND in the guest as root, over one
# shared connection (the first call opens it, gpiosim_check closes it). A
# new connection per command costs seconds of key exchange and PAM under
# emulation, and on a loaded host one timed out before it authenticated.
gpiosim_ssh() {
	ssh -q -i "$work/key" -p "$sshport" -o BatchMode=yes -o ConnectTimeout=60 -o ServerAliveInterval=10 \
		-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
		-o ControlMaster=auto -o "ControlPath=$work/gpiosim-ssh" -o ControlPersist=600 root@127.0.0.1 "$@"
}

# gpiosim_wait WHAT COMMAND: polls COMMAND in the guest until it succeeds,
# for at most GPIOSIM_TIMEOUT seconds.
gpiosim_wait() {
	local what=$1 cmd=$2 deadline=$((SECONDS + GPIOSIM_TIMEOUT))
	until gpiosim_ssh "$cmd"; do
		((SECONDS < deadline)) || fail "$what: not within ${GPIOSIM_TIMEOUT}s ($cmd)"
		sleep 1
	done
}

# gpiosim_submit N QUEST NODE: a passing answer to a checkpoint node: it
# waits for consent (REVIEW, exit 4).
gpiosim_submit() {
	local n=$1 q=$2 node=$3 out rc=0
	out=$(gpiosim_ssh questbox submit "$q" --node "$node" <<-'EOF'
		My findings.
		```json
		{"verdict": "promising", "evidence": "it reads all twenty sample invoices.", "citations": [], "new_directions": []}
		```
	EOF
	) || rc=$?
	((rc == 4)) && [[ $out == *awaiting_consent* ]] || fail "boot $n: submit $q --node $node: exit $rc, want 4 (REVIEW, awaiting consent):
$out"
}

# gpiosim_row NODE: the guest command that picks NODE's row of `quest
# show` and prints its status and tries ("pending 1/3").
gpiosim_row() {
	echo "awk '\$1 == \"$1\" && \$5 ~ \"^[0-9]+/[0-9]+\$\" {print \$4, \$5}'"
}

# gpiosim_node QUEST NODE: its status and tries, as quest show lists it.
gpiosim_node() {
	gpiosim_ssh "questbox quest show $1 | $(gpiosim_row "$2")"
}

# gpiosim_press N SYS long SECONDS | triple SECONDS: pulls the button line
# low as a pressed button does: once for SECONDS, or three times for
# SECONDS each with SECONDS between.
gpiosim_press() {
	local n=$1 sys=$2 kind=$3 hold=$4 times=1
	[[ $kind == triple ]] && times=3
	gpiosim_ssh bash -s -- "$sys/sim_gpio$gpiosim_button/pull" "$hold" "$times" <<-'EOF' || fail "boot $n: could not press the button line"
		set -euo pipefail
		pull=$1 hold=$2 times=$3
		fifo=$(mktemp -u /run/gpio-sim-press.XXXXXX)
		mkfifo "$fifo"
		exec 3<>"$fifo"
		rm "$fifo"
		for ((i = 0; i < times; i++)); do
			((i == 0)) || read -r -t "$hold" -u 3 || true
			echo pull-down >"$pull"
			read -r -t "$hold" -u 3 || true
			echo pull-up >"$pull"
		done
	EOF
}

# gpiosim_leds N SYS WHEN: samples the three LED lines for 4.5 s (three
# periods of the slowest pattern, the offline flash) and checks each
# against the pattern `device status` names before and after; sets
# gpiosim_seen to "green=P amber=P red=P" and gpiosim_stats to what each
# line read. The box's state may change on its own while the lines are
# read (the network probe finds the guest offline: amber starts to
# flash): then the sampling is taken again, three times at most.
gpiosim_leds() {
	local n=$1 sys=$2 when=$3 try
	for try in 1 2 3; do
		gpiosim_leds_once "$n" "$sys" "$when" && return
		log "boot $n ($when): the LEDs' patterns changed while their lines were read (try $try of 3):
$gpiosim_before
$gpiosim_after"
	done
	fail "boot $n ($when): the LEDs' patterns changed while their lines were read, three times"
}

# gpiosim_leds_once N SYS WHEN: one sampling of gpiosim_leds; returns 1,
# with gpiosim_before and gpiosim_after set, when a pattern changed
# meanwhile.
gpiosim_leds_once() {
	local n=$1 sys=$2 when=$3 before after samples led pin want got
	before=$(gpiosim_ssh questbox device status)
	samples=$(gpiosim_ssh bash -s -- "$sys" 4500000 "$gpiosim_green" "$gpiosim_amber" "$gpiosim_red" <<-'EOF'
		set -euo pipefail
		sys=$1 us=$2
		shift 2
		fifo=$(mktemp -u /run/gpio-sim-sample.XXXXXX)
		mkfifo "$fifo"
		exec 3<>"$fifo"
		rm "$fifo"
		start=${EPOCHREALTIME/./}
		end=$((start + us))
		while now=${EPOCHREALTIME/./}; ((now < end)); do
			line=$((now - start))
			for pin; do
				read -r v <"$sys/sim_gpio$pin/value"
				line+=" $v"
			done
			echo "$line"
			read -r -t 0.02 -u 3 || true
		done
	EOF
	) || fail "boot $n: could not read the LED lines"
	after=$(gpiosim_ssh questbox device status)
	gpiosim_seen= gpiosim_stats=
	local col=1
	for led in green amber red; do
		col=$((col + 1))
		want=$(awk -v l="$led" '$1 == l {$1 = $2 = ""; sub(/^ +/, ""); sub(/ +(on|off)$/, ""); print}' <<<"$before")
		if [[ $want != "$(awk -v l="$led" '$1 == l {$1 = $2 = ""; sub(/^ +/, ""); sub(/ +(on|off)$/, ""); print}' <<<"$after")" ]]; then
			gpiosim_before=$before gpiosim_after=$after
			return 1
		fi
		got=$(gpiosim_classify "$col" <<<"$samples")
		gpiosim_match "$want" "$got" || fail "boot $n ($when): $led should show '$want' (device status), its line read $got"
		gpiosim_seen+="$led=$want "
		gpiosim_stats+="$led $got; "
	done
	gpiosim_seen=${gpiosim_seen% }
	gpiosim_stats=${gpiosim_stats%; }
}

# gpiosim_classify COL: reads "t_us v1 v2 v3" samples and prints, for
# column COL, "samples S lit L on F rises R": L samples read 1, F is the
# time-weighted fraction lit, R the rising edges seen.
gpiosim_classify() {
	awk -v c="$1" '
		NR > 1 { dt = $1 - t; total += dt; if (v) on += dt; if ($c && !v) rises++ }
		{ t = $1; v = $c; n++; if (v) lit++ }
		END { printf "samples %d lit %d on %.2f rises %d\n", n, lit, total ? on / total : 0, rises }'
}

# gpiosim_match PATTERN "samples S on F rises R": whether 4.5 s of samples
# fit the pattern (device.Pattern.String). Blinks and flashes get slack
# for a loaded, emulated machine: a blink is lit about half the time and
# rises at least half as often as it should; a flash is lit briefly and
# seen at least once.
gpiosim_match() {
	local want=$1 samples lit on rises
	read -r _ samples _ lit _ on _ rises <<<"$2"
	((samples >= 20)) || return 1
	case $want in
	off) ((lit == 0)) ;;
	solid) ((lit == samples)) ;;
	"blink "*Hz)
		local hz=${want#blink }
		hz=${hz%Hz}
		awk -v on="$on" -v r="$rises" -v hz="$hz" 'BEGIN { exit !(on >= 0.3 && on <= 0.7 && r >= 4.5 * hz / 2) }'
		;;
	"flash "*) awk -v on="$on" -v r="$rises" 'BEGIN { exit !(on > 0 && on < 0.25 && r >= 1) }' ;;
	*) return 1 ;;
	esac
}
