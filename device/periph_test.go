package device

import "testing"

// TestSocChip: the Pi SoCs' pin controllers, whose offsets are BCM numbers,
// as the kernel labels them; nothing else is taken for one. (That a BCM
// number Debian's device trees name by function is found at its offset is
// checked on kernel GPIO lines by make image-test: image/gpio-sim-test.sh.)
func TestSocChip(t *testing.T) {
	for _, tc := range []struct {
		label string
		want  bool
	}{
		{"pinctrl-bcm2835", true}, // Pi 1 to 3, Zero, Zero 2 W
		{"pinctrl-bcm2711", true}, // Pi 4, 400
		{"pinctrl-rp1", false},    // Pi 5, under Raspberry Pi OS: its lines are named GPIO0..27
		{"raspberrypi-exp-gpio", false},
		{"9030000.pl061", false},
		{"", false},
	} {
		if got := socChip(tc.label); got != tc.want {
			t.Errorf("socChip(%q) = %v, want %v", tc.label, got, tc.want)
		}
	}
}
