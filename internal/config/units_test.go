package config

import (
	"testing"
	"time"
)

func TestDurationText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		out  string // MarshalText
	}{
		{"90s", 90 * time.Second, "1m30s"},
		{"60s", time.Minute, "1m"},
		{"5m", 5 * time.Minute, "5m"},
		{"24h", 24 * time.Hour, "24h"},
		{"1h30m", 90 * time.Minute, "90m"},
		{"50ms", 50 * time.Millisecond, "50ms"},
		{"1.5s", 1500 * time.Millisecond, "1.5s"},
		{" 2s ", 2 * time.Second, "2s"},
		{"0", 0, "0s"},
		{"-1m", -time.Minute, "-1m"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			var d Duration
			if err := d.UnmarshalText([]byte(tc.in)); err != nil {
				t.Fatalf("UnmarshalText: %v", err)
			}
			if d.Duration != tc.want {
				t.Errorf("got %v, want %v", d.Duration, tc.want)
			}
			out, _ := d.MarshalText()
			if string(out) != tc.out {
				t.Errorf("MarshalText = %q, want %q", out, tc.out)
			}
			var back Duration
			if err := back.UnmarshalText(out); err != nil || back != d {
				t.Errorf("round trip: got %v (%v), want %v", back, err, d)
			}
		})
	}
}

func TestDurationTextErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"5 minutes", `"5 minutes" is not a duration (use 90s, 5m, 24h)`},
		{"", `"" is not a duration (use 90s, 5m, 24h)`},
		{"60", `"60" is not a duration (use 90s, 5m, 24h)`},
		{"1d", `"1d" is not a duration (use 90s, 5m, 24h)`},
	} {
		var d Duration
		err := d.UnmarshalText([]byte(tc.in))
		if err == nil || err.Error() != tc.want {
			t.Errorf("UnmarshalText(%q) = %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestSizeText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Size
		out  string
	}{
		{"1MiB", MiB, "1MiB"},
		{"512KiB", 512 * KiB, "512KiB"},
		{"2GiB", 2 * GiB, "2GiB"},
		{"50MB", 50 * MB, "50MB"},
		{"50kB", 50 * KB, "50kB"},
		{"1 mib", MiB, "1MiB"},
		{"1048576", MiB, "1MiB"},
		{"100B", 100, "100"},
		{"1000001", 1000001, "1000001"},
		{"0", 0, "0"},
		{"1024KiB", MiB, "1MiB"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			var s Size
			if err := s.UnmarshalText([]byte(tc.in)); err != nil {
				t.Fatalf("UnmarshalText: %v", err)
			}
			if s != tc.want {
				t.Errorf("got %d, want %d", s, tc.want)
			}
			out, _ := s.MarshalText()
			if string(out) != tc.out {
				t.Errorf("MarshalText = %q, want %q", out, tc.out)
			}
			var back Size
			if err := back.UnmarshalText(out); err != nil || back != s {
				t.Errorf("round trip: got %v (%v), want %v", back, err, s)
			}
		})
	}
}

func TestSizeTextErrors(t *testing.T) {
	for _, in := range []string{"", "lots", "-1", "1.5MiB", "1MiBs", "MiB", "9999999999999GiB", "1 TiB"} {
		var s Size
		err := s.UnmarshalText([]byte(in))
		want := `"` + in + `" is not a size (use 1MiB, 512KiB, 50MB or a number of bytes)`
		if err == nil || err.Error() != want {
			t.Errorf("UnmarshalText(%q) = %v, want %q", in, err, want)
		}
	}
}

func FuzzSizeText(f *testing.F) {
	for _, s := range []string{"1MiB", "50MB", "12", "", "9223372036854775807", "8589934592GiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var s Size
		if err := s.UnmarshalText([]byte(in)); err != nil {
			return
		}
		if s < 0 {
			t.Fatalf("%q parsed to negative size %d", in, s)
		}
		out, _ := s.MarshalText()
		var back Size
		if err := back.UnmarshalText(out); err != nil || back != s {
			t.Fatalf("%q: round trip %q gave %d (%v), want %d", in, out, back, err, s)
		}
	})
}
