package main

// goxray build, test and run: the go command's build, test and run on
// instrumented copies of the main module's sources.
//
// Mechanism: the rewritten files are handed to the go command with
// -overlay, and, when the main module does not require goxray yet, a
// temporary go.mod (and go.sum) that does is handed with -modfile. The go
// command hashes overlaid files like any source, so the build cache keys
// follow the rewritten content: a plain build afterwards reuses the plain
// objects, and a repeated instrumented build finds its own. The overlay
// files are content-addressed under the user cache directory, so repeated
// builds name the same paths. The user's tree is only read.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/goxray/xray/internal/instrument"
)

func init() {
	register(command{name: "build", summary: "go build with every function of the main module traced", run: func(a []string) int { return goVerb("build", a) }})
	register(command{name: "test", summary: "go test with every function of the main module traced", run: func(a []string) int { return goVerb("test", a) }})
	register(command{name: "run", summary: "go run with every function of the main module traced", run: func(a []string) int { return goVerb("run", a) }})
}

const xrayModule = "github.com/goxray/xray"

// options are goxray's own flags, given as -xray.NAME[=value] anywhere
// among the go command's arguments (no go flag starts with -xray.).
type options struct {
	threshold int
	pkgs      []string // more package patterns to instrument
	generated bool
	replace   string // directory of the goxray module for the temporary go.mod
	verbose   bool
	noHooks   bool
	// env is GOOS/GOARCH for the go command: `GOARCH=arm64 go tool
	// goxray` would build this tool for arm64 and fail to run it.
	env []string
}

const instrumentUsage = `usage: goxray build|test|run [-xray.flags] [go flags] [packages] [arguments]

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
                       (above 0, functions the compiler would probably inline are not)
  -xray.pkgs=P1,P2     also instrument these package patterns (e.g. example.com/dep/...)
  -xray.generated      also instrument generated files (// Code generated … DO NOT EDIT.)
  -xray.noexit         no final flush at the end of main/TestMain
  -xray.replace=DIR    goxray module source for a module that does not require goxray
                       (default: $GOXRAY_REPLACE; else this binary's own module version)
  -xray.goos=OS        build for OS, -xray.goarch=ARCH for ARCH (GOOS=… go tool goxray
                       would build this tool for the target and fail to run it)
  -xray.v              print what was instrumented
`

func parseOptions(args []string) (options, []string, error) {
	o := options{threshold: instrument.DefaultThreshold, replace: os.Getenv("GOXRAY_REPLACE")}
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

// flagValue returns the last value of -name in flags.
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

type listModule struct {
	Path, Dir, GoMod, GoVersion string
	Main                        bool
}

type listPackage struct {
	ImportPath, Name, Dir, ForTest string
	Standard                       bool
	GoFiles, TestGoFiles           []string
	XTestGoFiles                   []string
	Module                         *listModule
	Error                          *struct{ Err string }
}

func goVerb(verb string, args []string) int {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fmt.Fprintf(os.Stderr, instrumentUsage, instrument.DefaultThreshold)
		return 2
	}
	o, args, err := parseOptions(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "goxray %s: %v\n", verb, err)
		fmt.Fprintf(os.Stderr, instrumentUsage, instrument.DefaultThreshold)
		return 2
	}
	for _, kv := range o.env {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v) // for go list and the build alike
	}
	extra, cleanup, err := prepare(verb, o, args)
	defer cleanup()
	if err != nil {
		fmt.Fprintf(os.Stderr, "goxray %s: %v\n", verb, err)
		return 1
	}
	// -C must stay first.
	full := []string{verb}
	if len(args) > 0 && (args[0] == "-C" || strings.HasPrefix(args[0], "-C=")) {
		n := 1
		if args[0] == "-C" && len(args) > 1 {
			n = 2
		}
		full, args = append(full, args[:n]...), args[n:]
	}
	// The user's -overlay is merged into goxray's, and a temporary
	// go.mod copies the user's -modfile: given again after them, they
	// would replace them.
	drop := []string{"overlay"}
	for _, e := range extra {
		if strings.HasPrefix(e, "-modfile=") {
			drop = append(drop, "modfile")
		}
	}
	full = append(append(full, extra...), withoutFlags(args, drop...)...)
	if o.verbose {
		fmt.Fprintf(os.Stderr, "goxray: go %s\n", strings.Join(full, " "))
	}
	cmd := exec.Command(goBin(), full...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		fmt.Fprintf(os.Stderr, "goxray %s: %v\n", verb, err)
		return 1
	}
	return 0
}

func goBin() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	if root := os.Getenv("GOROOT"); root != "" {
		if p := filepath.Join(root, "bin", "go"); fileExists(p) {
			return p
		}
	}
	return "go"
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// prepare writes the overlay (and the temporary go.mod when needed) and
// returns the flags that hand them to the go command.
func prepare(verb string, o options, args []string) (extra []string, cleanup func(), err error) {
	cleanup = func() {}
	flags, pkgs, _ := splitArgs(verb, args)
	if f := coverFlag(flags); f != "" {
		return nil, cleanup, fmt.Errorf("%s asks for coverage, and the go command builds covered packages from their files on disk, ignoring the -overlay that carries goxray's instrumentation: the binary would record nothing. Measure coverage with plain go %s, and trace without %s", f, verb, f)
	}
	if len(pkgs) == 0 {
		pkgs = []string{"."}
	}
	// Flags that change which packages and files the build sees.
	var listFlags []string
	if c, ok := flagValue(flags, "C"); ok {
		workDir = c
	}
	for _, name := range []string{"tags", "mod", "modfile", "overlay"} {
		if v, ok := flagValue(flags, name); ok {
			listFlags = append(listFlags, "-"+name+"="+v)
		}
	}
	tmp, err := os.MkdirTemp("", "goxray-")
	if err != nil {
		return nil, cleanup, err
	}
	cleanup = func() { os.RemoveAll(tmp) }

	// The temporary go.mod comes first: go list needs goxray resolvable
	// only for the final build, but must see the same module graph.
	mainMod, err := goJSON[listModule](append([]string{"list", "-m", "-json"}, listFlags...)...)
	if err != nil {
		return nil, cleanup, err
	}
	if len(mainMod) == 0 || mainMod[0].GoMod == "" {
		return nil, cleanup, errors.New("not in a module: goxray needs a go.mod")
	}
	mm := mainMod[0]
	if mm.Path != xrayModule && !requires(mm, listFlags) {
		if ws, _ := goJSON[struct{ GOWORK string }]("env", "-json", "GOWORK"); len(ws) == 1 && ws[0].GOWORK != "" && ws[0].GOWORK != "off" {
			return nil, cleanup, fmt.Errorf("module %s does not require %s, and a workspace (%s) cannot take a temporary go.mod: "+
				"run `go get -tool %s/cmd/goxray` in the module (GOWORK=off builds it alone)", mm.Path, xrayModule, ws[0].GOWORK, xrayModule)
		}
		modfile, lang, err := tempModfile(o, mm, flags, tmp)
		if err != nil {
			return nil, cleanup, err
		}
		extra = append(extra, "-modfile="+modfile)
		langPin = lang
		listFlags = append(withoutFlag(listFlags, "modfile"), "-modfile="+modfile)
		if _, ok := flagValue(flags, "mod"); !ok {
			extra = append(extra, "-mod=mod")
			listFlags = append(listFlags, "-mod=mod")
		}
	}

	listArgs := append([]string{"list", "-e", "-deps", "-json=ImportPath,Name,Dir,ForTest,Standard,GoFiles,TestGoFiles,XTestGoFiles,Module,Error"}, listFlags...)
	if verb == "test" {
		listArgs = append(listArgs, "-test")
	}
	list, err := goJSON[listPackage](append(listArgs, pkgs...)...)
	if err != nil {
		return nil, cleanup, err
	}
	for i := range list {
		// Files named on the command line (go run main.go) make a
		// package the go command attributes to no module: it belongs
		// to the main module, whose go.mod builds it.
		if path, _, _ := strings.Cut(list[i].ImportPath, " "); list[i].Module == nil && !list[i].Standard &&
			(path == "command-line-arguments" || path == "command-line-arguments_test") {
			list[i].Module = &mm
		}
	}
	extraPkgs := map[string]bool{}
	if len(o.pkgs) > 0 {
		more, err := goJSON[listPackage](append(append([]string{"list", "-e", "-json=ImportPath"}, listFlags...), o.pkgs...)...)
		if err != nil {
			return nil, cleanup, err
		}
		for _, p := range more {
			extraPkgs[p.ImportPath] = true
		}
	}
	_, trim := flagValue(flags, "trimpath")
	if !trim {
		for _, f := range flags {
			if f == "-trimpath" || f == "--trimpath" || f == "-trimpath=true" {
				trim = true
			}
		}
	}
	pruneOverlays()
	units := collectUnits(list, extraPkgs)
	cfg := instrument.Config{Threshold: o.threshold, SkipInlinable: o.threshold > 0, Generated: o.generated, ExitHooks: !o.noHooks,
		Importer: newExportImporter(listFlags, verb == "test", pkgs)}
	// The target's runtime.GOOS and GOARCH decide which code is dead.
	target, err := goJSON[struct{ GOOS, GOARCH, GOMODCACHE, GOVERSION string }]("env", "-json", "GOOS", "GOARCH", "GOMODCACHE", "GOVERSION")
	if err != nil {
		return nil, cleanup, err
	}
	if len(target) == 1 {
		cfg.GOOS, cfg.GOARCH, cfg.GoVersion = target[0].GOOS, target[0].GOARCH, target[0].GOVERSION
		if !supportedOS[cfg.GOOS] {
			return nil, cleanup, fmt.Errorf("GOOS=%s/GOARCH=%s is not supported: goxray records on linux (every GOARCH; assembly on amd64 and arm64) and darwin; build for %s with plain go build", cfg.GOOS, cfg.GOARCH, cfg.GOOS)
		}
		if err := outsideModCache(units, target[0].GOMODCACHE); err != nil {
			return nil, cleanup, err
		}
	}
	if langPin != "" {
		if o.verbose {
			fmt.Fprintf(os.Stderr, "goxray: the main module's files keep language version %s\n", langPin)
		}
	}
	overlay := map[string]string{}
	total, files := 0, 0
	// The user's own -overlay: its replacements are the sources to
	// instrument.
	userOv := map[string]string{}
	if ov, ok := flagValue(flags, "overlay"); ok {
		if userOv, err = readOverlay(ov); err != nil {
			return nil, cleanup, err
		}
	}
	for _, u := range units {
		in := make([]instrument.File, 0, len(u.files))
		for _, f := range u.files {
			from := f
			if r := userOv[f]; r != "" {
				from = r
			}
			src, err := os.ReadFile(from)
			if err != nil {
				return nil, cleanup, err
			}
			name := f
			if trim && u.mod != nil {
				if rel, err := filepath.Rel(u.mod.Dir, f); err == nil {
					name = u.mod.Path + "/" + filepath.ToSlash(rel)
				}
			}
			in = append(in, instrument.File{Path: f, Name: name, Src: src})
		}
		ucfg := cfg
		if u.mod != nil && u.mod.Main {
			ucfg.Lang = langPin
		}
		rs, err := instrument.Package(u.importPath, in, ucfg)
		if err != nil {
			return nil, cleanup, err
		}
		if len(rs) > 0 && rs[0].UntypedRanges > 0 {
			fmt.Fprintf(os.Stderr, "goxray: %s: %d range loops over values whose type could not be loaded; function literals in their bodies may be named in the trace as Go 1.26 names them, not as this Go release does\n", u.importPath, rs[0].UntypedRanges)
		}
		for _, r := range rs {
			if r.Src == nil {
				continue
			}
			p, err := storeOverlay(r.Path, r.Src)
			if err != nil {
				return nil, cleanup, err
			}
			overlay[r.Path] = p
			files++
			total += len(r.Funcs)
			if o.verbose {
				for _, f := range r.Funcs {
					fmt.Fprintf(os.Stderr, "goxray: %s:%d %s (size %d)\n", r.Path, f.Line, f.Name, f.Size)
				}
			}
		}
		if verb == "test" && cfg.ExitHooks && u.needsTestMain {
			name := filepath.Join(u.dir, "zz_goxray_testmain_test.go")
			src := fmt.Sprintf(testMainSrc, u.pkgName)
			p, err := storeOverlay(name, []byte(src))
			if err != nil {
				return nil, cleanup, err
			}
			overlay[name] = p
		}
	}
	if o.verbose {
		fmt.Fprintf(os.Stderr, "goxray: %d functions instrumented in %d files\n", total, files)
	}
	if ov, ok := flagValue(flags, "overlay"); ok {
		if err := mergeOverlay(overlay, ov); err != nil {
			return nil, cleanup, err
		}
	}
	js, err := json.Marshal(struct{ Replace map[string]string }{overlay})
	if err != nil {
		return nil, cleanup, err
	}
	ovPath := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ovPath, js, 0o644); err != nil {
		return nil, cleanup, err
	}
	extra = append(extra, "-overlay="+ovPath)
	return extra, cleanup, nil
}

// outsideModCache refuses units in the module cache, whose files the go
// command does not let an overlay replace (-xray.pkgs naming a plain
// dependency), with the ways that work.
func outsideModCache(units []*unit, modcache string) error {
	if modcache == "" {
		return nil
	}
	for _, u := range units {
		if rel, err := filepath.Rel(modcache, u.dir); err == nil && filepath.IsLocal(rel) {
			return fmt.Errorf("-xray.pkgs: %s is in the module cache, whose files the go command lets no overlay replace: "+
				"vendor it (go mod vendor), put its module in a go.work workspace, or replace it with a local copy", u.importPath)
		}
	}
	return nil
}

const testMainSrc = `// Code generated by goxray. DO NOT EDIT.

package %s

import (
	"os"
	"testing"

	__xray "github.com/goxray/xray/xrayauto"
)

// TestMain writes the final trace when the tests end.
func TestMain(m *testing.M) { os.Exit(__xray.AutoExit(m.Run())) }
`

// A unit is what the compiler compiles as one package: a package with its
// internal test files, or an external test package.
type unit struct {
	importPath, pkgName, dir string
	files                    []string // absolute, compile order
	mod                      *listModule
	needsTestMain            bool
}

func selected(p listPackage, extra map[string]bool) bool {
	if p.Standard || p.Module == nil && !extra[p.ImportPath] {
		return false
	}
	if p.Module != nil && p.Module.Path == xrayModule && p.Name != "main" {
		return false // goxray itself, except its commands
	}
	if p.Name == "main" && strings.HasSuffix(p.ImportPath, ".test") && p.ForTest == "" {
		return false // the generated test main
	}
	return extra[p.ImportPath] || p.Module != nil && p.Module.Main
}

// supportedOS are the systems the runtime builds for: it needs
// Unix signals, mmap and a monotonic raw clock.
var supportedOS = map[string]bool{"linux": true, "darwin": true}

func collectUnits(list []listPackage, extra map[string]bool) []*unit {
	byPath := map[string]*unit{}
	var order []string
	hasTestMain := map[string]bool{} // by directory
	testDirs := map[string]string{}  // dir → package name, for dirs with tests
	// Packages under test have a test main "path.test"; go list reports
	// the test files of every other package too, but they are not
	// compiled (their test variant "path [path.test]" lists them among
	// its GoFiles when they are).
	tested := map[string]bool{}
	for _, p := range list {
		if p.Name == "main" && strings.HasSuffix(p.ImportPath, ".test") {
			tested[strings.TrimSuffix(p.ImportPath, ".test")] = true
		}
	}
	for _, p := range list {
		path, _, _ := strings.Cut(p.ImportPath, " ")
		if p.Error != nil && len(p.GoFiles) == 0 {
			continue
		}
		if !selected(p, extra) {
			continue
		}
		isX := strings.HasSuffix(p.Name, "_test")
		u := byPath[path]
		if u == nil {
			u = &unit{importPath: path, pkgName: p.Name, dir: p.Dir, mod: p.Module}
			byPath[path] = u
			order = append(order, path)
		}
		have := map[string]bool{}
		for _, f := range u.files {
			have[f] = true
		}
		for _, f := range p.GoFiles {
			if filepath.IsAbs(f) {
				continue // generated by the go command (cgo, test main)
			}
			f = filepath.Join(p.Dir, f)
			if !have[f] {
				have[f] = true
				u.files = append(u.files, f)
			}
		}
		if (len(p.TestGoFiles) > 0 || len(p.XTestGoFiles) > 0) && !isX && tested[path] {
			testDirs[p.Dir] = p.Name
		}
	}
	var out []*unit
	for _, path := range order {
		u := byPath[path]
		// The compiler's order: the package's files sorted by name, or
		// in command-line order for go run b.go a.go (it numbers init
		// functions), then its tests.
		byName := !strings.HasPrefix(u.importPath, "command-line-arguments")
		sort.SliceStable(u.files, func(i, j int) bool {
			ti, tj := strings.HasSuffix(u.files[i], "_test.go"), strings.HasSuffix(u.files[j], "_test.go")
			if ti != tj {
				return !ti
			}
			return byName && u.files[i] < u.files[j]
		})
		for _, f := range u.files {
			if strings.HasSuffix(f, "_test.go") && declaresTestMain(f) {
				hasTestMain[u.dir] = true
			}
		}
		out = append(out, u)
	}
	for _, u := range out {
		if name, ok := testDirs[u.dir]; ok && name == u.pkgName && !hasTestMain[u.dir] {
			u.needsTestMain = true
		}
	}
	return out
}

func declaresTestMain(path string) bool {
	b, err := os.ReadFile(path)
	return err == nil && bytes.Contains(b, []byte("func TestMain("))
}

// overlayStore is where rewritten files live: the user cache directory,
// so that an unchanged file keeps its overlay path from build to build.
func overlayStore() string {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "goxray", "overlay")
}

// overlayMaxAge is how long an overlay file unused by any build is kept.
const overlayMaxAge = 14 * 24 * time.Hour

// pruneOverlays removes the overlay files no build used for overlayMaxAge
// (storeOverlay touches the ones it reuses). A build that needs one again
// writes it again, byte for byte, at the same path.
func pruneOverlays() {
	store := overlayStore()
	ents, err := os.ReadDir(store)
	if err != nil {
		return
	}
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > overlayMaxAge {
			os.RemoveAll(filepath.Join(store, e.Name()))
		}
	}
}

// storeOverlay writes src under the overlay store, named by its content,
// and returns the path.
func storeOverlay(orig string, src []byte) (string, error) {
	sum := sha256.Sum256(append([]byte(orig+"\x00"), src...))
	dir := filepath.Join(overlayStore(), hex.EncodeToString(sum[:12]))
	p := filepath.Join(dir, filepath.Base(orig))
	if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, src) {
		now := time.Now()
		os.Chtimes(dir, now, now)
		return p, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	t, err := os.CreateTemp(dir, "tmp-*")
	if err != nil {
		return "", err
	}
	if _, err := t.Write(src); err != nil {
		t.Close()
		os.Remove(t.Name())
		return "", err
	}
	if err := t.Close(); err != nil {
		return "", err
	}
	return p, os.Rename(t.Name(), p)
}

// mergeOverlay adds the user's overlay entries for the files goxray did
// not rewrite (those it did were rewritten from the user's replacement).
func mergeOverlay(into map[string]string, path string) error {
	ov, err := readOverlay(path)
	if err != nil {
		return err
	}
	for k, v := range ov {
		if _, ok := into[k]; !ok {
			into[k] = v
		}
	}
	return nil
}

// readOverlay reads an -overlay file, with its paths made absolute as the
// go command resolves them (against the working directory).
func readOverlay(path string) (map[string]string, error) {
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		if workDir != "" {
			p = filepath.Join(workDir, p)
		}
		a, err := filepath.Abs(p)
		if err != nil {
			return p
		}
		return a
	}
	b, err := os.ReadFile(abs(path))
	if err != nil {
		return nil, err
	}
	var ov struct{ Replace map[string]string }
	if err := json.Unmarshal(b, &ov); err != nil {
		return nil, fmt.Errorf("-overlay %s: %v", path, err)
	}
	out := make(map[string]string, len(ov.Replace))
	for k, v := range ov.Replace {
		out[abs(k)] = abs(v)
	}
	return out, nil
}

// requires reports whether the main module's go.mod requires goxray.
func requires(mm listModule, listFlags []string) bool {
	gomod := mm.GoMod
	for _, f := range listFlags {
		if v, ok := strings.CutPrefix(f, "-modfile="); ok {
			gomod = v
		}
	}
	cmd := exec.Command(goBin(), "mod", "edit", "-json", gomod)
	cmd.Dir = workDir
	out, err := cmd.Output()
	if err != nil {
		return false
	}
	var m struct{ Require []struct{ Path string } }
	if json.Unmarshal(out, &m) != nil {
		return false
	}
	for _, r := range m.Require {
		if r.Path == xrayModule {
			return true
		}
	}
	return false
}

// tempModfile writes a go.mod requiring goxray beside a copy of go.sum,
// in a directory named after their content, and returns its path.
//
// When goxray needs a newer go line than the module's, the go command
// raises it, which would change the language version of the module's
// files; lang is then the original version ("go1.18") for
// instrument.Config.Lang to pin.
func tempModfile(o options, mm listModule, flags []string, tmp string) (modfile, lang string, err error) {
	src := mm.GoMod
	if v, ok := flagValue(flags, "modfile"); ok {
		src = v
	}
	gomod, err := os.ReadFile(src)
	if err != nil {
		return "", "", err
	}
	gosum, _ := os.ReadFile(strings.TrimSuffix(src, ".mod") + ".sum")
	version := "v0.0.0"
	if o.replace == "" {
		bi, ok := debug.ReadBuildInfo()
		if !ok || bi.Main.Path != xrayModule || bi.Main.Version == "" || bi.Main.Version == "(devel)" {
			return "", "", fmt.Errorf("module %s does not require %s, and this goxray was not built from a published version: "+
				"run `go get -tool %s/cmd/goxray` in the module, or give -xray.replace=DIR (or GOXRAY_REPLACE) naming a goxray source tree", mm.Path, xrayModule, xrayModule)
		}
		version = bi.Main.Version
	} else if o.replace, err = filepath.Abs(o.replace); err != nil {
		return "", "", err
	}
	dir := filepath.Join(tmp, "mod")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	modfile = filepath.Join(dir, "go.mod")
	if err := os.WriteFile(modfile, gomod, 0o644); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), gosum, 0o644); err != nil {
		return "", "", err
	}
	if o.replace != "" {
		edit := []string{"mod", "edit", "-modfile=" + modfile, "-replace=" + xrayModule + "=" + o.replace}
		ed := exec.Command(goBin(), edit...)
		ed.Dir = workDir
		if out, err := ed.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("go %s: %v: %s", strings.Join(edit, " "), err, out)
		}
	}
	// go get adds goxray's requirements and checksums, and raises the go
	// line if goxray needs a newer one (the go command insists the main
	// module's go line be at least every dependency's).
	get := exec.Command(goBin(), "get", "-modfile="+modfile, xrayModule+"@"+version)
	get.Dir = workDir
	if out, err := get.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("go get -modfile=%s %s@%s: %v: %s", modfile, xrayModule, version, err, out)
	}
	// 1.26 and 1.26.0 are one language version: only a newer one pins.
	before, after := langOf(goLine(src)), langOf(goLine(modfile))
	if before != after && before != "" {
		lang = before
		fmt.Fprintf(os.Stderr, "goxray: the temporary go.mod needs a newer go line for %s (%s); your files keep %s\n", xrayModule, after, before)
	}
	return modfile, lang, nil
}

// langOf is the language version of a go line: "1.21.3" → "go1.21".
func langOf(v string) string {
	if v == "" {
		return ""
	}
	major, minor, _ := strings.Cut(v, ".")
	minor, _, _ = strings.Cut(minor, ".")
	return "go" + major + "." + minor
}

// goLine is the go version a go.mod declares.
func goLine(gomod string) string {
	cmd := exec.Command(goBin(), "mod", "edit", "-json", gomod)
	cmd.Dir = workDir
	out, err := cmd.Output()
	var m struct{ Go string }
	if err != nil || json.Unmarshal(out, &m) != nil {
		return ""
	}
	return m.Go
}

func withoutFlag(flags []string, name string) []string {
	var out []string
	for _, f := range flags {
		if !strings.HasPrefix(f, "-"+name+"=") {
			out = append(out, f)
		}
	}
	return out
}

// langPin is the language version the main module's files keep when the
// temporary go.mod raised its go line.
var langPin string

// workDir is where prepare runs the go command: the -C directory.
var workDir string

// goJSON runs the go command and decodes its stream of JSON values.
func goJSON[T any](args ...string) ([]T, error) {
	cmd := exec.Command(goBin(), args...)
	cmd.Dir = workDir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	var vs []T
	for {
		var v T
		if err := dec.Decode(&v); err == io.EOF {
			return vs, nil
		} else if err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
}
