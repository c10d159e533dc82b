package daemon

import (
	"testing"

	"github.com/questbox/questbox/device"
	"github.com/questbox/questbox/internal/config"
)

func TestMirrorOnACT(t *testing.T) {
	fitted := config.Default().GPIO
	none := fitted
	none.Green, none.Amber, none.Red = -1, -1, -1
	for _, tc := range []struct {
		name    string
		g       config.GPIO
		act     bool
		backend string
		want    bool
	}{
		{"off", none, false, device.BackendPeriph, false},
		{"LEDs fitted", fitted, true, device.BackendPeriph, false},
		{"no LEDs fitted", none, true, device.BackendPeriph, true},
		{"simulated LEDs", fitted, true, device.BackendSim, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.g.ActLED = tc.act
			if got := mirrorOnACT(tc.g, tc.backend); got != tc.want {
				t.Errorf("mirrorOnACT = %v, want %v", got, tc.want)
			}
		})
	}
}
