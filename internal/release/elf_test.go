package release

import (
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"encoding/binary"
	"os"
	"testing"

	"github.com/questbox/questbox/internal/buildtest"
)

// TestReadExecutableAgreesWithDebugPackages: on real questbox builds for
// every target questbox ships and on this test binary, the hand-read ELF
// machine and build info are debug/elf's and debug/buildinfo's.
func TestReadExecutableAgreesWithDebugPackages(t *testing.T) {
	paths := map[string]string{}
	for _, v := range []buildtest.Variant{{Version: "v0.9.0", Arch: "amd64"}, {Version: "v0.9.0", Arch: "arm64"},
		{Version: "v0.9.0", Arch: "arm", ARM: "6"}, {Version: "v0.9.0", Arch: "arm", ARM: "7"}} {
		paths[v.Arch+v.ARM] = buildtest.Build(t, v)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	paths["test binary"] = self
	for name, path := range paths {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			ef, err := elf.NewFile(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			want, err := buildinfo.Read(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			f, err := readELF(b)
			if err != nil {
				t.Fatal(err)
			}
			if f.machine != uint16(ef.Machine) {
				t.Errorf("machine %d, debug/elf says %d (%v)", f.machine, ef.Machine, ef.Machine)
			}
			got, err := readBuildInfo(f)
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() || got.GoVersion != want.GoVersion {
				t.Errorf("build info\n%s\ndebug/buildinfo reads\n%s", got, want)
			}
		})
	}
}

// A damaged or cut binary is an error, never a panic or a read past its
// end: every truncation of a real one's first pages, and its header
// fields set to extremes.
func TestReadExecutableRefusesDamage(t *testing.T) {
	b, err := os.ReadFile(buildtest.Build(t, buildtest.Variant{Version: "v0.9.0", Arch: "arm", ARM: "6"}))
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < 4096; n++ {
		if _, err := Inspect(b[:n]); err == nil {
			t.Fatalf("the first %d bytes pass Inspect", n)
		}
	}
	if _, err := Inspect(b[:len(b)/2]); err == nil {
		t.Error("half a binary passes Inspect")
	}
	for _, tc := range []struct {
		name string
		at   int
		put  func([]byte)
	}{
		{"program headers far away", 28, func(h []byte) { binary.LittleEndian.PutUint32(h, 0xfffffff0) }},
		{"program headers past the end", 42, func(h []byte) {
			binary.LittleEndian.PutUint16(h, 0xffff)
			binary.LittleEndian.PutUint16(h[2:], 0xffff)
		}},
		{"tiny program headers", 42, func(h []byte) { binary.LittleEndian.PutUint16(h, 4) }},
		{"64-bit class on a 32-bit header", 4, func(h []byte) { h[0] = 2 }},
		{"unknown class", 4, func(h []byte) { h[0] = 9 }},
		{"unknown byte order", 5, func(h []byte) { h[0] = 0 }},
		{"big-endian", 5, func(h []byte) { h[0] = 2 }},
		{"no build info", 0, func([]byte) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := bytes.Clone(b)
			tc.put(c[tc.at:])
			if tc.name == "no build info" {
				c = bytes.ReplaceAll(c, []byte(buildInfoMagic), []byte("\xff Go buildinf!"))
			}
			if target, err := Inspect(c); err == nil {
				t.Errorf("passes Inspect as %v", target)
			}
		})
	}
}

// FuzzInspect: no input makes Inspect panic or accept what debug/elf
// cannot read.
func FuzzInspect(f *testing.F) {
	f.Add([]byte("\x7fELF\x02\x01\x01"))
	f.Add(append([]byte("\x7fELF\x01\x01\x01"), make([]byte, 60)...))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := Inspect(b); err == nil {
			if _, err := elf.NewFile(bytes.NewReader(b)); err != nil {
				t.Fatalf("Inspect accepts what debug/elf refuses: %v", err)
			}
		}
	})
}
