package overlaybuild

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/goxray/xray/internal/instrument"
)

const xrayModule = "github.com/goxray/xray"

// A driver is one build, test or run: what the command line asked for and
// what preparing the overlay learned about the main module. The go
// commands it runs all go through goCmd, which applies its directory and
// environment.
type driver struct {
	verb string // build, test or run
	opts options
	// env is the go command's environment: this process's, with the
	// -xray.goos/-xray.goarch target (GOOS=… go tool goxray would build
	// this tool for the target and fail to run it).
	env []string
	// workDir is where the go commands that prepare the build run: the
	// -C directory ("" is the working directory). The build itself is
	// given -C.
	workDir string
	// langPin is the language version the main module's files keep when
	// the temporary go.mod raised its go line ("" when it did not).
	langPin string
}

// Run is goxray build, test or run (verb) with the arguments after it: it
// writes the overlay, runs the go command with it, and returns the exit
// code to leave with (the go command's own when it ran).
func Run(verb string, args []string) int {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fmt.Fprintf(os.Stderr, usage, instrument.DefaultThreshold)
		return 2
	}
	o, args, err := parseOptions(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "goxray %s: %v\n", verb, err)
		fmt.Fprintf(os.Stderr, usage, instrument.DefaultThreshold)
		return 2
	}
	d := &driver{verb: verb, opts: o, env: append(os.Environ(), o.env...)}
	quiet := whenSlow(prepareNotice)
	extra, cleanup, err := d.prepare(args)
	quiet()
	defer cleanup()
	if err != nil {
		fmt.Fprintf(os.Stderr, "goxray %s: %v\n", verb, err)
		return 1
	}
	cmd := d.goCmd(d.buildArgs(args, extra)...)
	cmd.Dir = "" // the build takes the user's -C itself
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

// buildArgs is the go command line of the build: the verb, the user's
// -C first (the go command insists), goxray's flags, then the user's
// arguments.
func (d *driver) buildArgs(args, extra []string) []string {
	full := []string{d.verb}
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
	if d.opts.verbose {
		fmt.Fprintf(os.Stderr, "goxray: go %s\n", strings.Join(full, " "))
	}
	return full
}

// goCmd is the go command with args, run in workDir with the target's
// environment.
func (d *driver) goCmd(args ...string) *exec.Cmd {
	cmd := exec.Command(goBin(), args...)
	cmd.Dir = d.workDir
	cmd.Env = d.env
	return cmd
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

// goJSON runs the go command and decodes its stream of JSON values.
func goJSON[T any](d *driver, args ...string) ([]T, error) {
	cmd := d.goCmd(args...)
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

// prepare writes the overlay (and the temporary go.mod when needed) and
// returns the flags that hand them to the go command.
func (d *driver) prepare(args []string) (extra []string, cleanup func(), err error) {
	cleanup = func() {}
	flags, pkgs, _ := splitArgs(d.verb, args)
	if f := coverFlag(flags); f != "" {
		return nil, cleanup, fmt.Errorf("%s asks for coverage, and the go command builds covered packages from their files on disk, ignoring the -overlay that carries goxray's instrumentation: the binary would record nothing. Measure coverage with plain go %s, and trace without %s", f, d.verb, f)
	}
	if len(pkgs) == 0 {
		pkgs = []string{"."}
	}
	if c, ok := flagValue(flags, "C"); ok {
		d.workDir = c
	}
	// Flags that change which packages and files the build sees.
	var listFlags []string
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

	mm, modExtra, listFlags, err := d.mainModule(flags, listFlags, tmp)
	if err != nil {
		return nil, cleanup, err
	}
	extra = append(extra, modExtra...)
	units, roots, err := d.units(mm, pkgs, listFlags)
	if err != nil {
		return nil, cleanup, err
	}
	cfg := instrument.Config{Threshold: d.opts.threshold, SkipInlinable: d.opts.threshold > 0, Generated: d.opts.generated, ExitHooks: !d.opts.noHooks,
		SkipLeaves: d.opts.threshold > 0 && d.opts.leaves != leavesTrace, LeafLoops: d.opts.leaves == leavesSkipLoops,
		Importer: newExportImporter(d, listFlags, pkgs)}
	// The target's runtime.GOOS and GOARCH decide which code is dead.
	target, err := goJSON[struct{ GOOS, GOARCH, GOMODCACHE, GOVERSION string }](d, "env", "-json", "GOOS", "GOARCH", "GOMODCACHE", "GOVERSION")
	if err != nil {
		return nil, cleanup, err
	}
	if len(target) == 1 {
		cfg.GOOS, cfg.GOARCH, cfg.GoVersion = target[0].GOOS, target[0].GOARCH, target[0].GOVERSION
		if !supportedOS[cfg.GOOS] {
			return nil, cleanup, fmt.Errorf("GOOS=%s/GOARCH=%s is not supported: goxray records on linux (every GOARCH; assembly on amd64 and arm64) and darwin; build for %s with plain go build", cfg.GOOS, cfg.GOARCH, cfg.GOOS)
		}
		if err := untraced(roots, mm, target[0].GOMODCACHE); err != nil {
			return nil, cleanup, err
		}
		if err := outsideModCache(units, target[0].GOMODCACHE); err != nil {
			return nil, cleanup, err
		}
	}
	if d.langPin != "" && d.opts.verbose {
		fmt.Fprintf(os.Stderr, "goxray: the main module's files keep language version %s\n", d.langPin)
	}
	// The user's own -overlay: its replacements are the sources to
	// instrument, and its other entries stay in the build's.
	userOv := map[string]string{}
	if ov, ok := flagValue(flags, "overlay"); ok {
		if userOv, err = readOverlay(ov, d.workDir); err != nil {
			return nil, cleanup, err
		}
	}
	overlay, err := d.instrument(units, cfg, userOv, trimpath(flags))
	if err != nil {
		return nil, cleanup, err
	}
	mergeOverlay(overlay, userOv)
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

// trimpath reports whether flags ask for -trimpath.
func trimpath(flags []string) bool {
	if _, ok := flagValue(flags, "trimpath"); ok {
		return true
	}
	for _, f := range flags {
		if f == "-trimpath" || f == "--trimpath" || f == "-trimpath=true" {
			return true
		}
	}
	return false
}

// mainModule finds the main module and, when it does not require goxray,
// writes the temporary go.mod that does (in tmp). It returns the flags the
// build needs for it and listFlags with them: go list must see the same
// module graph as the build.
func (d *driver) mainModule(flags, listFlags []string, tmp string) (mm listModule, extra, outListFlags []string, err error) {
	mainMod, err := goJSON[listModule](d, append([]string{"list", "-m", "-json"}, listFlags...)...)
	if err != nil {
		return mm, nil, nil, err
	}
	if len(mainMod) == 0 || mainMod[0].GoMod == "" {
		return mm, nil, nil, errors.New("not in a module: goxray needs a go.mod")
	}
	mm = mainMod[0]
	if mm.Path == xrayModule || d.requires(mm, listFlags) {
		return mm, nil, listFlags, nil
	}
	if ws, _ := goJSON[struct{ GOWORK string }](d, "env", "-json", "GOWORK"); len(ws) == 1 && ws[0].GOWORK != "" && ws[0].GOWORK != "off" {
		return mm, nil, nil, fmt.Errorf("module %s does not require %s, and a workspace (%s) cannot take a temporary go.mod: "+
			"run `go get -tool %s/cmd/goxray` in the module (GOWORK=off builds it alone)", mm.Path, xrayModule, ws[0].GOWORK, xrayModule)
	}
	modfile, lang, err := d.tempModfile(mm, flags, tmp)
	if err != nil {
		return mm, nil, nil, err
	}
	d.langPin = lang
	extra = []string{"-modfile=" + modfile}
	listFlags = append(withoutFlag(listFlags, "modfile"), "-modfile="+modfile)
	if _, ok := flagValue(flags, "mod"); !ok {
		extra = append(extra, "-mod=mod")
		listFlags = append(listFlags, "-mod=mod")
	}
	return mm, extra, listFlags, nil
}

// listDeps is the go list command line for the packages the build
// compiles and their dependencies (with their tests for go test), with
// extra flags such as -json's fields.
func (d *driver) listDeps(listFlags, pkgs []string, extra ...string) []string {
	args := append(append([]string{"list", "-e", "-deps"}, extra...), listFlags...)
	if d.verb == "test" {
		args = append(args, "-test")
	}
	return append(args, pkgs...)
}

// units lists the packages the build compiles (with their tests for go
// test) and returns those to instrument, and the packages the command line
// names that none of them is (see untraced).
func (d *driver) units(mm listModule, pkgs, listFlags []string) ([]*unit, []listPackage, error) {
	list, err := goJSON[listPackage](d, d.listDeps(listFlags, pkgs, "-json=ImportPath,Name,Dir,ForTest,Standard,DepOnly,GoFiles,TestGoFiles,XTestGoFiles,CgoFiles,SFiles,Module,Error")...)
	if err != nil {
		return nil, nil, err
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
	if len(d.opts.pkgs) > 0 {
		more, err := goJSON[listPackage](d, append(append([]string{"list", "-e", "-json=ImportPath"}, listFlags...), d.opts.pkgs...)...)
		if err != nil {
			return nil, nil, err
		}
		for _, p := range more {
			extraPkgs[p.ImportPath] = true
		}
	}
	if list, err = withoutRuntimeImports(list, d.runtimeImports(listFlags), extraPkgs); err != nil {
		return nil, nil, err
	}
	pruneOverlays()
	var roots []listPackage
	for _, p := range list {
		if !p.DepOnly && p.ForTest == "" && p.Error == nil && !(p.Name == "main" && strings.HasSuffix(p.ImportPath, ".test")) && !selected(p, extraPkgs) {
			roots = append(roots, p)
		}
	}
	return collectUnits(list, extraPkgs), roots, nil
}

// requires reports whether the main module's go.mod requires goxray.
func (d *driver) requires(mm listModule, listFlags []string) bool {
	gomod := mm.GoMod
	for _, f := range listFlags {
		if v, ok := strings.CutPrefix(f, "-modfile="); ok {
			gomod = v
		}
	}
	out, err := d.goCmd("mod", "edit", "-json", gomod).Output()
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
// in a directory under tmp, and returns its path.
//
// When goxray needs a newer go line than the module's, the go command
// raises it, which would change the language version of the module's
// files; lang is then the original version ("go1.18") for
// instrument.Config.Lang to pin.
func (d *driver) tempModfile(mm listModule, flags []string, tmp string) (modfile, lang string, err error) {
	src := mm.GoMod
	if v, ok := flagValue(flags, "modfile"); ok {
		src = v
	}
	gomod, err := os.ReadFile(src)
	if err != nil {
		return "", "", err
	}
	gosum, _ := os.ReadFile(strings.TrimSuffix(src, ".mod") + ".sum")
	version, replace := "v0.0.0", d.opts.replace
	if replace == "" {
		bi, ok := debug.ReadBuildInfo()
		if !ok || bi.Main.Path != xrayModule || bi.Main.Version == "" || bi.Main.Version == "(devel)" {
			return "", "", fmt.Errorf("module %s does not require %s, and this goxray was not built from a published version: "+
				"run `go get -tool %s/cmd/goxray` in the module, or give -xray.replace=DIR (or GOXRAY_REPLACE) naming a goxray source tree", mm.Path, xrayModule, xrayModule)
		}
		version = bi.Main.Version
	} else if replace, err = filepath.Abs(replace); err != nil {
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
	if replace != "" {
		edit := []string{"mod", "edit", "-modfile=" + modfile, "-replace=" + xrayModule + "=" + replace}
		if out, err := d.goCmd(edit...).CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("go %s: %v: %s", strings.Join(edit, " "), err, out)
		}
	}
	// go get adds goxray's requirements and checksums, and raises the go
	// line if goxray needs a newer one (the go command insists the main
	// module's go line be at least every dependency's).
	if out, err := d.goCmd("get", "-modfile="+modfile, xrayModule+"@"+version).CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("go get -modfile=%s %s@%s: %v: %s", modfile, xrayModule, version, err, out)
	}
	// 1.26 and 1.26.0 are one language version: only a newer one pins.
	orig := d.goModJSON(src)
	before, after := langOf(orig.Go), langOf(d.goModJSON(modfile).Go)
	if before != after && before != "" {
		lang = before
		fmt.Fprintf(os.Stderr, "goxray: the temporary go.mod needs a newer go line for %s (%s); your files keep %s\n", xrayModule, after, before)
		// The go line also sets the program's GODEBUG defaults (what
		// panic(nil) does, which TLS and HTTP behaviours are on): the
		// original's stay, unless the go.mod names a default itself.
		if !orig.godebugDefault() {
			edit := []string{"mod", "edit", "-modfile=" + modfile, "-godebug=default=" + before}
			if out, err := d.goCmd(edit...).CombinedOutput(); err != nil {
				return "", "", fmt.Errorf("go %s: %v: %s", strings.Join(edit, " "), err, out)
			}
		}
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

// goMod is what a go.mod declares of its go version and GODEBUG
// settings.
type goMod struct {
	Go      string
	GoDebug []struct{ Key, Value string }
}

// godebugDefault reports whether the go.mod names the Go version its
// GODEBUG defaults are taken from (godebug default=go1.N).
func (m goMod) godebugDefault() bool {
	for _, g := range m.GoDebug {
		if g.Key == "default" {
			return true
		}
	}
	return false
}

// goModJSON reads a go.mod (the zero goMod if it cannot).
func (d *driver) goModJSON(gomod string) goMod {
	out, err := d.goCmd("mod", "edit", "-json", gomod).Output()
	var m goMod
	if err != nil || json.Unmarshal(out, &m) != nil {
		return goMod{}
	}
	return m
}
