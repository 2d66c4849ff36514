package overlaybuild

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/goxray/xray/internal/instrument"
)

// options are goxray's own flags, given as -xray.NAME[=value] anywhere
// among the go command's arguments (no go flag starts with -xray.).
type options struct {
	threshold int
	leaves    string   // -xray.leaves: leavesSkip, leavesTrace or leavesSkipLoops
	pkgs      []string // more package patterns to instrument
	generated bool
	replace   string // directory of the goxray module for the temporary go.mod
	verbose   bool
	noHooks   bool
	// env is GOOS/GOARCH for the go command: `GOARCH=arm64 go tool
	// goxray` would build this tool for arm64 and fail to run it.
	env []string
}

// The values of -xray.leaves: what becomes of call-free leaves (see
// internal/instrument's leaf.go) at a threshold above 0.
const (
	leavesSkip      = "skip"       // loop-free ones are not traced (the default)
	leavesTrace     = "trace"      // all are traced (-xray.leaves alone)
	leavesSkipLoops = "skip-loops" // none is traced, loops or not
)

// usage is the help text of build, test and run, with the default
// threshold to fill in.
const usage = `usage: goxray build|test|run [-xray.flags] [go flags] [packages] [arguments]

Runs the go command on instrumented copies of the main module's sources:
every function, method and function literal whose body has at least
-xray.threshold syntax nodes (or whose doc comment says //xray:always, and
never one that says //xray:never) records its entry and exit. Start
tracing with XRAY_OPTIONS="patch_premain=true xray_mode=xray-fdr
xray_logfile_base=DIR/" and flush with SIGUSR1; the program also writes a
final file when main returns, on os.Exit and log.Fatal* in instrumented
code, and at the end of each test binary.

goxray flags (anywhere among the arguments):
  -xray.threshold=N    smallest body (syntax nodes) instrumented; default %d, 0 = all
                       (above 0, functions the compiler would probably inline are not,
                       nor small call-free leaves without loops: see -xray.leaves)
  -xray.leaves[=MODE]  call-free leaves: trace (the flag alone) traces them; skip (default)
                       leaves out those without loops; skip-loops leaves out those with
                       loops too. -xray.v names each one left out
  -xray.pkgs=P1,P2     also instrument these package patterns (e.g. example.com/dep/...)
  -xray.generated      also instrument generated files (// Code generated … DO NOT EDIT.)
  -xray.noexit         no final flush at the end of main/TestMain
  -xray.replace=DIR    goxray module source for a module that does not require goxray
                       (default: $GOXRAY_REPLACE; else this binary's own module version)
  -xray.goos=OS        build for OS, -xray.goarch=ARCH for ARCH (GOOS=… go tool goxray
                       would build this tool for the target and fail to run it)
  -xray.v              print what was instrumented, and every function left out and why
`

func parseOptions(args []string) (options, []string, error) {
	o := options{threshold: instrument.DefaultThreshold, leaves: leavesSkip, replace: os.Getenv("GOXRAY_REPLACE")}
	var rest []string
	for i, a := range args {
		if a == "--" || a == "-args" {
			rest = append(rest, args[i:]...)
			break
		}
		if !strings.HasPrefix(a, "-xray.") {
			rest = append(rest, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimPrefix(a, "-xray."), "=")
		switch name {
		case "threshold":
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 {
				return o, nil, fmt.Errorf("-xray.threshold=%q: want a number ≥ 0", val)
			}
			o.threshold = n
		case "leaves":
			switch {
			case !hasVal:
				o.leaves = leavesTrace
			case val == leavesSkip || val == leavesTrace || val == leavesSkipLoops:
				o.leaves = val
			default:
				return o, nil, fmt.Errorf("-xray.leaves=%q: want %s, %s or %s", val, leavesTrace, leavesSkip, leavesSkipLoops)
			}
		case "pkgs":
			for _, p := range strings.Split(val, ",") {
				if p != "" {
					o.pkgs = append(o.pkgs, p)
				}
			}
		case "generated":
			o.generated = !hasVal || val == "true"
		case "noexit":
			o.noHooks = !hasVal || val == "true"
		case "replace":
			o.replace = val
		case "v":
			o.verbose = !hasVal || val == "true"
		case "goos", "goarch":
			if val == "" {
				return o, nil, fmt.Errorf("-xray.%s: want a value", name)
			}
			o.env = append(o.env, strings.ToUpper(name)+"="+val)
		default:
			return o, nil, fmt.Errorf("unknown flag -xray.%s", name)
		}
	}
	return o, rest, nil
}

// Flags of go build/test/run that take a value as the next argument when
// written without '='.
var valueFlags = map[string]bool{
	"C": true, "o": true, "p": true, "tags": true, "gcflags": true, "ldflags": true, "asmflags": true,
	"gccgoflags": true, "mod": true, "modfile": true, "overlay": true, "pkgdir": true, "toolexec": true,
	"buildmode": true, "compiler": true, "installsuffix": true, "pgo": true, "covermode": true,
	"coverpkg": true, "exec": true, "vet": true, "run": true, "bench": true, "count": true,
	"timeout": true, "cpu": true, "parallel": true, "benchtime": true, "coverprofile": true,
	"cpuprofile": true, "memprofile": true, "memprofilerate": true, "blockprofile": true,
	"blockprofilerate": true, "mutexprofile": true, "mutexprofilefraction": true, "outputdir": true,
	"trace": true, "shuffle": true, "fuzz": true, "fuzztime": true, "fuzzminimizetime": true,
	"list": true, "skip": true, "reqcount": true,
}

// splitArgs separates the go command's flags from its package arguments.
// For run, everything after the first package argument (or after the
// .go files) belongs to the program.
func splitArgs(verb string, args []string) (flags, pkgs, tail []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-args" || a == "--" {
			tail = append(tail, args[i:]...)
			return
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") && valueFlags[name] && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
			continue
		}
		if verb == "run" {
			pkgs = append(pkgs, a)
			for strings.HasSuffix(a, ".go") && i+1 < len(args) && strings.HasSuffix(args[i+1], ".go") {
				i++
				a = args[i]
				pkgs = append(pkgs, a)
			}
			tail = append(tail, args[i+1:]...)
			return
		}
		pkgs = append(pkgs, a)
	}
	return
}

// withoutFlags drops the named flags from the go command's flags (those
// before the first package argument).
func withoutFlags(args []string, names ...string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-args" || a == "--" || !strings.HasPrefix(a, "-") {
			return append(out, args[i:]...)
		}
		name := strings.TrimLeft(a, "-")
		bare, _, _ := strings.Cut(name, "=")
		if slices.Contains(names, bare) {
			if bare == name && i+1 < len(args) {
				i++
			}
			continue
		}
		out = append(out, a)
		if !strings.Contains(name, "=") && valueFlags[name] && i+1 < len(args) {
			i++
			out = append(out, args[i])
		}
	}
	return out
}

// coverFlag returns the first flag that turns on coverage
// instrumentation (-cover, -coverpkg, -covermode, -coverprofile), or "".
func coverFlag(flags []string) string {
	for _, f := range flags {
		name, val, _ := strings.Cut(strings.TrimLeft(f, "-"), "=")
		switch name {
		case "cover":
			if val != "false" {
				return "-cover"
			}
		case "coverpkg", "covermode", "coverprofile":
			return "-" + name
		}
	}
	return ""
}

// flagValue returns the last value of -name in flags.
func flagValue(flags []string, name string) (string, bool) {
	val, found := "", false
	for i := 0; i < len(flags); i++ {
		f := strings.TrimLeft(flags[i], "-")
		if f == name && i+1 < len(flags) {
			val, found = flags[i+1], true
			i++
		} else if v, ok := strings.CutPrefix(f, name+"="); ok {
			val, found = v, true
		}
	}
	return val, found
}

// withoutFlag drops every -name=value from flags.
func withoutFlag(flags []string, name string) []string {
	var out []string
	for _, f := range flags {
		if !strings.HasPrefix(f, "-"+name+"=") {
			out = append(out, f)
		}
	}
	return out
}
