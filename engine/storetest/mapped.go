package storetest

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// MappedKiB is the resident size of this process's mappings of the file
// at path, from /proc/self/smaps (Linux): how much of a store bbolt's
// memory map holds in the process's RSS.
func MappedKiB(path string) (int64, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var kib int64
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if fields := strings.Fields(l); len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			in = len(fields) == 6 && fields[5] == path
			continue
		}
		if v, ok := strings.CutPrefix(l, "Rss:"); in && ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("smaps: %q: %w", l, err)
			}
			kib += n
		}
	}
	return kib, sc.Err()
}
