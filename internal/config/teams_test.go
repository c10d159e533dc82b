package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestTeamsConfig(t *testing.T) {
	tests := []struct {
		name string
		file string
		want map[string]string
		errs []string
	}{
		{"none", "", nil, nil},
		{"scout and poc", "[teams.scout]\naccept = \"names the engine\"\n[teams.poc]\naccept = \"runs\"\n",
			map[string]string{"scout": "names the engine", "poc": "runs"}, nil},
		{"unknown kind", "[teams.wizard]\naccept = \"x\"\n", nil, []string{`team kind "wizard" is not one of scout, poc, strategist, custom`}},
		{"blank accept", "[teams.custom]\naccept = \" \"\n", nil, []string{"teams.custom.accept: missing or blank"}},
		{"unknown key", "[teams.scout]\naccpt = \"x\"\n", nil, []string{"unknown key teams.scout.accpt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.file), "questbox.toml")
			if len(tt.errs) == 0 {
				if err != nil {
					t.Fatalf("got %v, want no error", err)
				}
				if got := c.TeamAccept(); !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("got no error, want %v", tt.errs)
			}
			for _, w := range tt.errs {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("got %v, want it to say %q", err, w)
				}
			}
		})
	}
}
