package instrmap

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/goxray/xray/fdr"
)

// call is one function record of a test trace.
type call struct {
	a  fdr.Action
	id uint32
}

func enter(id uint32) call { return call{fdr.Enter, id} }
func exit(id uint32) call  { return call{fdr.Exit, id} }

// trace builds a version-5 FDR file with one block on one thread: header,
// BufferExtents, NewBuffer, WallClock, PID, NewCPUId, then the calls, each
// 10 ticks after the previous one, at 1 GHz.
func trace(calls []call) []byte {
	var body []byte
	body = fdr.AppendNewBuffer(body, 101)
	body = fdr.AppendWallClock(body, 1_700_000_000, 0)
	body = fdr.AppendPID(body, 4242)
	body = fdr.AppendNewCPUId(body, 0, 1_000_000)
	for _, c := range calls {
		body = fdr.AppendFunction(body, c.a, c.id, 10)
	}
	b := fdr.AppendHeader(nil, fdr.Header{Version: 5, Type: fdr.FileTypeFDR, ConstantTSC: true, NonstopTSC: true, CycleFrequency: 1e9})
	b = fdr.AppendBufferExtents(b, uint64(len(body)))
	return append(b, body...)
}

// flat is a trace calling each id once, one after the other.
func flat(ids ...uint32) []byte {
	var calls []call
	for _, id := range ids {
		calls = append(calls, enter(id), exit(id))
	}
	return trace(calls)
}

// writeMap writes the map of funcs into a file and returns its path.
func writeMap(t testing.TB, dir string, funcs []Func) string {
	t.Helper()
	var buf bytes.Buffer
	n, err := Write(&buf, funcs)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) {
		t.Fatalf("Write returned %d, wrote %d bytes", n, buf.Len())
	}
	p := filepath.Join(dir, "trace.map")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func writeTrace(t testing.TB, dir string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, "trace.xray")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// accountRow is one function row of `llvm-xray account`.
type accountRow struct {
	count int
	loc   string // "main.go:10:0", "<invalid>:0:0" or "(unknown)"
	name  string
}

var accountLine = regexp.MustCompile(`^\s*(\d+)\s+(\d+)\s+\[[^\]]*\]\s+\S+\s+(.*)$`)

// parseAccount reads account's table: funcid, count, [min, med, 90p, 99p,
// max], sum, "location: name". The location never contains ": ", so the
// first one separates it from the name.
func parseAccount(t testing.TB, out string) map[uint32]accountRow {
	t.Helper()
	rows := map[uint32]accountRow{}
	for _, l := range strings.Split(out, "\n") {
		m := accountLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		id, _ := strconv.ParseUint(m[1], 10, 32)
		count, _ := strconv.Atoi(m[2])
		loc, name, ok := strings.Cut(m[3], ": ")
		if !ok {
			t.Fatalf("account row without location: %q", l)
		}
		rows[uint32(id)] = accountRow{count, loc, name}
	}
	return rows
}

var graphLabel = regexp.MustCompile(`(?m)^F(\d+) \[label="(.*)"\];$`)

// parseGraph reads the vertex labels of `llvm-xray graph` (DOT).
func parseGraph(out string) map[uint32]string {
	names := map[uint32]string{}
	for _, m := range graphLabel.FindAllStringSubmatch(out, -1) {
		id, _ := strconv.ParseUint(m[1], 10, 32)
		names[uint32(id)] = m[2]
	}
	return names
}

var yamlFunction = regexp.MustCompile(`func-id: (\d+), function: `)

// parseSymbolized reads the function names from
// `convert -symbolize -output-format=yaml`: plain, single-quoted or
// double-quoted YAML scalars (the writer replaces every byte YAML would
// need an escape for, except the single quote, which YAML doubles).
func parseSymbolized(t testing.TB, out string) map[uint32]string {
	t.Helper()
	names := map[uint32]string{}
	for _, l := range strings.Split(out, "\n") {
		loc := yamlFunction.FindStringSubmatchIndex(l)
		if loc == nil {
			continue
		}
		id, _ := strconv.ParseUint(l[loc[2]:loc[3]], 10, 32)
		name, err := yamlScalar(l[loc[1]:])
		if err != nil {
			t.Fatalf("%v in %q", err, l)
		}
		names[uint32(id)] = name
	}
	return names
}

func yamlScalar(s string) (string, error) {
	switch {
	case strings.HasPrefix(s, "'"):
		var b strings.Builder
		for i := 1; i < len(s); i++ {
			if s[i] == '\'' {
				if i+1 < len(s) && s[i+1] == '\'' {
					b.WriteByte('\'')
					i++
					continue
				}
				return b.String(), nil
			}
			b.WriteByte(s[i])
		}
	case strings.HasPrefix(s, `"`):
		var b strings.Builder
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '"':
				return b.String(), nil
			case '\\':
				return "", errUnexpected("escape in double-quoted scalar")
			}
			b.WriteByte(s[i])
		}
	default:
		if name, _, ok := strings.Cut(s, ", "); ok {
			return name, nil
		}
	}
	return "", errUnexpected("unterminated scalar")
}

type errUnexpected string

func (e errUnexpected) Error() string { return string(e) }
