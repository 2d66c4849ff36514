// Package xraytool runs the real llvm-xray on files the runtime wrote and
// reads its output back, for the interop tests.
//
// A missing tool (llvm-xray, qemu, …) fails the test when the environment
// variable GOXRAY_REQUIRE_TOOLS is set to 1, as `make test` and .ci/run do,
// so CI never passes without the interop tests. A plain `go test ./...`
// on a machine without the tool skips those tests instead, saying which
// command installs it, as Go's testenv.MustHaveExecPath does.
package xraytool

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// RequireToolsVar names the environment variable that turns a missing tool
// from a skip into a failure.
const RequireToolsVar = "GOXRAY_REQUIRE_TOOLS"

// Bin returns the llvm-xray binary the tests use: $LLVM_XRAY, or
// llvm-xray. A missing binary skips the test (fails it under
// GOXRAY_REQUIRE_TOOLS=1), naming the package that provides it.
func Bin(t testing.TB) string {
	t.Helper()
	name := os.Getenv("LLVM_XRAY")
	if name == "" {
		name = "llvm-xray"
	}
	pkg := "llvm"
	if strings.HasSuffix(name, "-19") {
		pkg = "llvm-19"
	}
	return NeedExec(t, name, "apt-get install -y "+pkg+" (or set LLVM_XRAY to the binary's name)")
}

// NeedExec returns the path of the executable name, or skips the test
// (fails it under GOXRAY_REQUIRE_TOOLS=1) with a message carrying
// installHint, the command that installs it.
func NeedExec(t testing.TB, name, installHint string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	msg := fmt.Sprintf("%s not found (%v); install it with: %s", name, err, installHint)
	if Required() {
		t.Fatalf("%s [%s=1: a missing tool fails]", msg, RequireToolsVar)
	}
	t.Skipf("%s [skipped; %s=1 makes this a failure]", msg, RequireToolsVar)
	return ""
}

// Required reports whether missing tools fail tests (GOXRAY_REQUIRE_TOOLS=1).
func Required() bool { return os.Getenv(RequireToolsVar) == "1" }

// Run runs bin with args and returns its standard output; a non-zero exit
// is an error carrying standard error.
func Run(bin string, args ...string) (string, error) {
	var out, errb bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %s: %v: %s", bin, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// Record is one record of `llvm-xray convert --output-format=yaml`.
type Record struct {
	Kind    string // function-enter, function-exit, function-tail-exit, function-enter-arg, custom-event, typed-event
	FuncID  uint32
	Args    []uint64
	CPU     uint16
	Thread  int32
	Process int32
	TSC     uint64
	Data    string
}

// Trace is the whole YAML document.
type Trace struct {
	Version, Type           int
	ConstantTSC, NonstopTSC bool
	Frequency               uint64
	Records                 []Record
}

// Convert runs `convert --sort=false --output-format=yaml` (plus extra
// flags) on path and parses the result. Without --sort=false llvm-xray
// re-sorts by TSC and would hide ordering bugs.
func Convert(bin, path string, extra ...string) (*Trace, error) {
	args := append([]string{"convert", "--sort=false", "--output-format=yaml"}, extra...)
	out, err := Run(bin, append(args, path)...)
	if err != nil {
		return nil, err
	}
	return ParseYAML(out)
}

// ByThread groups records by thread, keeping file order.
func (t *Trace) ByThread() map[int32][]Record {
	m := map[int32][]Record{}
	for _, r := range t.Records {
		m[r.Thread] = append(m[r.Thread], r)
	}
	return m
}

// ParseYAML reads the YAML llvm-xray convert prints.
func ParseYAML(s string) (*Trace, error) {
	tr := &Trace{}
	inRecords := false
	for n, line := range strings.Split(s, "\n") {
		trim := strings.TrimSpace(line)
		switch {
		case trim == "" || trim == "---" || trim == "..." || trim == "header:":
		case trim == "records:" || trim == "records:         []":
			inRecords = true
		case !inRecords:
			k, v, ok := strings.Cut(trim, ":")
			if !ok {
				return nil, fmt.Errorf("yaml line %d: %q", n+1, line)
			}
			v = strings.TrimSpace(v)
			var err error
			switch k {
			case "version":
				tr.Version, err = strconv.Atoi(v)
			case "type":
				tr.Type, err = strconv.Atoi(v)
			case "constant-tsc":
				tr.ConstantTSC = v == "true"
			case "nonstop-tsc":
				tr.NonstopTSC = v == "true"
			case "cycle-frequency":
				tr.Frequency, err = strconv.ParseUint(v, 10, 64)
			}
			if err != nil {
				return nil, fmt.Errorf("yaml line %d: %v", n+1, err)
			}
		default:
			r, err := parseRecord(trim)
			if err != nil {
				return nil, fmt.Errorf("yaml line %d: %v: %q", n+1, err, line)
			}
			tr.Records = append(tr.Records, r)
		}
	}
	return tr, nil
}

func parseRecord(s string) (Record, error) {
	var r Record
	if !strings.HasPrefix(s, "- {") || !strings.HasSuffix(s, "}") {
		return r, fmt.Errorf("not a flow mapping")
	}
	p := &scanner{s: s[3 : len(s)-1]}
	for {
		p.space()
		if p.done() {
			return r, nil
		}
		key := p.until(':')
		p.i++
		p.space()
		var val string
		var list []string
		var err error
		switch {
		case p.peek() == '[':
			list, err = p.list()
		case p.peek() == '\'':
			val, err = p.single()
		case p.peek() == '"':
			val, err = p.double()
		default:
			val = strings.TrimSpace(p.until(','))
		}
		if err != nil {
			return r, err
		}
		if err := r.set(key, val, list); err != nil {
			return r, err
		}
		p.space()
		if p.peek() == ',' {
			p.i++
		}
	}
}

func (r *Record) set(key, val string, list []string) error {
	var err error
	var u uint64
	var i int64
	switch key {
	case "kind":
		r.Kind = val
	case "func-id":
		u, err = strconv.ParseUint(val, 10, 32)
		r.FuncID = uint32(u)
	case "cpu":
		u, err = strconv.ParseUint(val, 10, 16)
		r.CPU = uint16(u)
	case "thread":
		i, err = strconv.ParseInt(val, 10, 32)
		r.Thread = int32(i)
	case "process":
		i, err = strconv.ParseInt(val, 10, 32)
		r.Process = int32(i)
	case "tsc":
		r.TSC, err = strconv.ParseUint(val, 10, 64)
	case "data":
		r.Data = val
	case "args":
		for _, a := range list {
			v, err := strconv.ParseUint(a, 10, 64)
			if err != nil {
				return err
			}
			r.Args = append(r.Args, v)
		}
	}
	return err
}

type scanner struct {
	s string
	i int
}

func (p *scanner) done() bool { return p.i >= len(p.s) }
func (p *scanner) peek() byte {
	if p.done() {
		return 0
	}
	return p.s[p.i]
}
func (p *scanner) space() {
	for !p.done() && p.s[p.i] == ' ' {
		p.i++
	}
}
func (p *scanner) until(c byte) string {
	start := p.i
	for !p.done() && p.s[p.i] != c {
		p.i++
	}
	return p.s[start:p.i]
}

func (p *scanner) list() ([]string, error) {
	p.i++ // [
	body := p.until(']')
	if p.done() {
		return nil, fmt.Errorf("unterminated list")
	}
	p.i++
	var out []string
	for _, f := range strings.Split(body, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out, nil
}

func (p *scanner) single() (string, error) {
	p.i++
	var b strings.Builder
	for !p.done() {
		c := p.s[p.i]
		p.i++
		if c == '\'' {
			if p.peek() == '\'' {
				b.WriteByte('\'')
				p.i++
				continue
			}
			return b.String(), nil
		}
		b.WriteByte(c)
	}
	return "", fmt.Errorf("unterminated quoted string")
}

func (p *scanner) double() (string, error) {
	p.i++
	var b strings.Builder
	for !p.done() {
		c := p.s[p.i]
		p.i++
		switch c {
		case '"':
			return b.String(), nil
		case '\\':
			if p.done() {
				return "", fmt.Errorf("bad escape")
			}
			e := p.s[p.i]
			p.i++
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '0':
				b.WriteByte(0)
			case '\\', '"', '/', ' ':
				b.WriteByte(e)
			case 'x':
				if p.i+2 > len(p.s) {
					return "", fmt.Errorf("bad \\x escape")
				}
				v, err := strconv.ParseUint(p.s[p.i:p.i+2], 16, 8)
				if err != nil {
					return "", err
				}
				b.WriteByte(byte(v))
				p.i += 2
			default:
				return "", fmt.Errorf("unsupported escape \\%c", e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", fmt.Errorf("unterminated quoted string")
}

// Check runs the loaders a user would on path and fails t on any error:
// fdr-dump -verify (the only one that names a load error), convert, account
// and, when the file has calls, stack. It returns the converted trace.
func Check(t testing.TB, bin, path string) *Trace {
	t.Helper()
	if out, err := Run(bin, "fdr-dump", "-verify", path); err != nil {
		t.Fatalf("fdr-dump -verify: %v\n%s", err, tail(out))
	}
	tr, err := Convert(bin, path)
	if err != nil {
		t.Fatalf("convert: %v", err)
	}
	if _, err := Run(bin, "account", path); err != nil {
		t.Fatalf("account: %v", err)
	}
	calls := false
	for _, r := range tr.Records {
		if strings.HasPrefix(r.Kind, "function-") {
			calls = true
			break
		}
	}
	if calls {
		if _, err := Run(bin, "stack", path); err != nil {
			t.Fatalf("stack: %v", err)
		}
	}
	return tr
}

func tail(s string) string {
	if len(s) > 2000 {
		return "…" + s[len(s)-2000:]
	}
	return s
}
