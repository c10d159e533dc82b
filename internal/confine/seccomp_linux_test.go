package confine

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The seccomp tables hold the kernel's numbers: golang.org/x/sys/unix's
// tables, generated from the kernel's headers, for each ABI.
func TestSyscallTablesMatchTheKernels(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "golang.org/x/sys").Output()
	if err != nil {
		t.Fatalf("go list golang.org/x/sys: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "unix")
	line := regexp.MustCompile(`(?m)^\s*SYS_([A-Z0-9_]+)\s*=\s*(\d+)`)
	for goarch, s := range map[string]sysnums{"amd64": x8664, "386": i386, "arm64": aarch64, "arm": arm} {
		src, err := os.ReadFile(filepath.Join(dir, "zsysnum_linux_"+goarch+".go"))
		if err != nil {
			t.Fatal(err)
		}
		kernel := map[string]uint32{}
		for _, m := range line.FindAllStringSubmatch(string(src), -1) {
			n, _ := strconv.ParseUint(m[2], 10, 32)
			kernel[strings.ToLower(m[1])] = uint32(n)
		}
		for name, nr := range s.nr {
			if k, ok := kernel[name]; !ok || k != nr {
				t.Errorf("%s: %s is %d here, %d (found %v) in the kernel's table", goarch, name, nr, k, ok)
			}
		}
		// Every denied call the ABI has is in the table.
		for _, d := range denied {
			if _, ok := kernel[d.name]; ok {
				if _, mine := s.nr[d.name]; !mine {
					t.Errorf("%s: the table lacks %s", goarch, d.name)
				}
			}
		}
		for _, name := range []string{"clone", "clone3", "unshare", "socket", "setsid", "setpgid"} {
			if _, ok := s.nr[name]; !ok {
				t.Errorf("%s: the table lacks %s", goarch, name)
			}
		}
	}
}

// Every family's program assembles: its jumps stay within reach.
func TestSeccompProgramsAssemble(t *testing.T) {
	for _, family := range [][]sysnums{{x8664, i386}, {aarch64, arm}} {
		for _, opts := range [][3]bool{{false, false, false}, {true, false, false}, {false, true, false}, {true, true, true}} {
			prog, err := program(family, opts[0], opts[1], opts[2])
			if err != nil {
				t.Fatalf("%x %v: %v", family[0].audit, opts, err)
			}
			if len(prog) > 4096 {
				t.Errorf("%x %v: %d instructions, more than the kernel takes", family[0].audit, opts, len(prog))
			}
		}
	}
}
