package buffer

import (
	"bufio"
	"bytes"
	"os"
	"path"
	"strconv"
	"strings"
)

// MaxArenaFraction is the largest share of the process's memory limit an
// arena may take: Start refuses bigger ones (see MemoryLimit). The arena is
// committed when it is mapped, so it counts in full against the limit from
// the start, and the program needs the rest.
const MaxArenaFraction = 0.5

// MemoryLimit returns the tightest memory limit set on the process by its
// control groups (cgroup v2 memory.max, or v1 memory.limit_in_bytes, of its
// group and every ancestor), and the file that sets it; 0 and "" when there
// is none or it cannot be read (not Linux, no cgroup file system).
func MemoryLimit() (limit uint64, source string) {
	return memoryLimit("/proc/self/cgroup", "/sys/fs/cgroup")
}

// unlimited is the value above which a limit means "none" (cgroup v1 shows
// "no limit" as a page-rounded 2^63-1).
const unlimited = 1 << 62

func memoryLimit(selfCgroup, fsRoot string) (limit uint64, source string) {
	data, err := os.ReadFile(selfCgroup)
	if err != nil {
		return 0, ""
	}
	consider := func(file string) {
		b, err := os.ReadFile(file)
		if err != nil {
			return
		}
		v, err := strconv.ParseUint(string(bytes.TrimSpace(b)), 10, 64)
		if err != nil || v >= unlimited { // "max", or v1's huge "no limit"
			return
		}
		if limit == 0 || v < limit {
			limit, source = v, file
		}
	}
	walk := func(dir, group, file string) {
		for p := path.Clean("/" + group); ; p = path.Dir(p) {
			consider(path.Join(dir, p, file))
			if p == "/" {
				return
			}
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		// hierarchy-id:controllers:path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			// cgroup v2: the unified hierarchy, mounted at the root or,
			// on hybrid systems, under unified/.
			walk(fsRoot, parts[2], "memory.max")
			walk(path.Join(fsRoot, "unified"), parts[2], "memory.max")
		case hasController(parts[1], "memory"):
			walk(path.Join(fsRoot, "memory"), parts[2], "memory.limit_in_bytes")
		}
	}
	return limit, source
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}
