package xray

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/goxray/xray/internal/engine"
	"github.com/goxray/xray/internal/settings"
)

// TestAdoptAppliesOrNamesEveryOption: when XRAY_OPTIONS started tracing,
// Start gives that session every option a running session can change and
// names each other one it was asked for in its "not applied" line; no
// option is silently dropped. Which is which is the schema's Adopt
// (internal/settings); every row has a case here.
func TestAdoptAppliesOrNamesEveryOption(t *testing.T) {
	type check func(run engine.Config, logged *[]string) bool
	cases := map[string]struct {
		set     func(o *Options, dir string)
		applied check // how to see a Live setting applied; nil for the others
	}{
		"Dir":         {func(o *Options, dir string) { o.Dir = dir }, func(run engine.Config, _ *[]string) bool { return strings.HasSuffix(run.Dir, "adopted") }},
		"Version":     {func(o *Options, _ string) { o.Version = 1 }, nil},
		"BufferSize":  {func(o *Options, _ string) { o.BufferSize = 128 << 10 }, nil},
		"BufferCount": {func(o *Options, _ string) { o.BufferCount = 100 }, nil},
		"Mode":        {func(o *Options, _ string) { o.Mode = Fill }, nil},
		"FlushSignal": {func(o *Options, _ string) { o.FlushSignal = syscall.SIGUSR2 }, func(run engine.Config, _ *[]string) bool { return run.FlushSignal == syscall.SIGUSR2 }},
		"Logf": {func(o *Options, _ string) {}, func(run engine.Config, logged *[]string) bool {
			run.Logf("adopted Logf")
			return slices.Contains(*logged, "adopted Logf")
		}},
		"Program":     {func(o *Options, _ string) { o.Program = "adopted" }, func(run engine.Config, _ *[]string) bool { return run.Program == "adopted" }},
		"FilePrefix":  {func(o *Options, _ string) { o.FilePrefix = "adopted." }, func(run engine.Config, _ *[]string) bool { return run.FilePrefix == "adopted." }},
		"MinDuration": {func(o *Options, _ string) { o.MinDuration = time.Millisecond }, nil},
		"NoFinalFile": {func(o *Options, _ string) { o.NoFinalFile = true }, func(run engine.Config, _ *[]string) bool { return run.NoFinalFile }},
		"FlushOnExit": {func(o *Options, _ string) { o.FlushOnExit = true }, func(run engine.Config, _ *[]string) bool { return run.FlushOnExit }},
		"FastClock":   {func(o *Options, _ string) { o.FastClock = true }, nil},
		"OverheadBudget": {func(o *Options, _ string) { o.OverheadBudget = NoOverheadBudget }, func(run engine.Config, _ *[]string) bool {
			return run.OverheadBudget == 0 && Stats().OverheadBudget == 0
		}},
		"IgnoreEnv":    {func(o *Options, _ string) { o.IgnoreEnv = true }, nil},
		"DirMaxFiles":  {func(o *Options, _ string) { o.DirMaxFiles = 7 }, func(run engine.Config, _ *[]string) bool { return run.DirMaxFiles == 7 }},
		"DirMaxBytes":  {func(o *Options, _ string) { o.DirMaxBytes = 7 << 20 }, func(run engine.Config, _ *[]string) bool { return run.DirMaxBytes == 7<<20 }},
		"GoTrace":      {func(o *Options, _ string) { o.GoTrace = true }, nil},
		"GoTraceBytes": {func(o *Options, _ string) { o.GoTraceBytes = 8 << 20 }, nil},
	}
	for i := range settings.Table {
		e := &settings.Table[i]
		name := e.Field
		tc, ok := cases[name]
		if !ok {
			t.Errorf("Options.%s has no case here", name)
			continue
		}
		if live := e.Adopt == settings.Live; live != (tc.applied != nil) {
			t.Errorf("%s: the schema says Live is %v, the case has a check: %v", name, live, tc.applied != nil)
			continue
		}
		t.Run(name, func(t *testing.T) {
			// The session XRAY_OPTIONS would have started (the default
			// budget, as its Start(Options{}) gives).
			env, err := Options{Dir: t.TempDir(), FlushSignal: NoSignal, IgnoreEnv: true, Logf: func(string, ...any) {}}.config()
			if err != nil {
				t.Fatal(err)
			}
			if err := engine.Start(env); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { Stop() })
			started := engine.ReadStats().Started

			var mu sync.Mutex
			var logged []string
			o := Options{Dir: t.TempDir(), Logf: func(format string, args ...any) {
				mu.Lock()
				defer mu.Unlock()
				logged = append(logged, fmt.Sprintf(format, args...))
			}}
			dir := filepath.Join(t.TempDir(), "adopted")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			tc.set(&o, dir)
			c, err := o.config()
			if err != nil {
				t.Fatal(err)
			}
			run, err := adopt(o, c, started)
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			line := strings.Join(logged, "\n")
			mu.Unlock()
			named := strings.Contains(line, "not: ") && strings.Contains(line[strings.Index(line, "not: "):], name)
			switch {
			case tc.applied == nil && !named:
				t.Errorf("%s was neither applied nor named in %q", name, line)
			case tc.applied != nil && !tc.applied(run, &logged):
				t.Errorf("%s was not applied (running with %+v); log %q", name, run, line)
			case tc.applied != nil && named:
				t.Errorf("%s was applied, yet named as not: %q", name, line)
			}
		})
	}
}
