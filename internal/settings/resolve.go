package settings

import (
	"errors"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"syscall"

	"github.com/goxray/xray/internal/buffer"
	"github.com/goxray/xray/internal/logline"
	"github.com/goxray/xray/internal/tmpfile"
)

// Resolve replaces v's zero fields (and its "none" values) with what a
// session uses, in Table order (GoTraceBytes follows the buffers it
// defaults from). env holds the settings the environment set, so that a
// value it set to zero stays (xray_logfile_base="dir/": no prefix).
func Resolve(v *Values, env Set) {
	for i := range Table {
		if e := &Table[i]; e.resolve != nil {
			e.resolve(v, env)
		}
	}
}

// Validate checks a resolved v, each setting by its row of Table, then
// what concerns several: the length of file names, and that Dir exists,
// is a directory and takes a new file (Validate creates and removes one,
// so that a flush cannot fail later for a reason Start could have seen).
// The error wraps ErrConfig and names the field.
func (v *Values) Validate() error {
	for i := range Table {
		e := &Table[i]
		if e.check == nil {
			continue
		}
		if why, got := e.check(v); why != "" {
			return fmt.Errorf("%w: %s %v: %s", ErrConfig, e.Field, got, why)
		}
	}
	if n := len(v.FilePrefix) + len(v.Program); n > maxNameLen {
		return fmt.Errorf("%w: FilePrefix+Program %d: bytes: file names would exceed 255 bytes; keep the two under %d", ErrConfig, n, maxNameLen+1)
	}
	return checkDir(v.Dir, v.NamePrefix())
}

// NamePrefix is what the names of a session's files in Dir begin with
// (FilePrefix+Program+".", then random characters), the prefix of their
// hidden temporary names too, and what the directory budget counts.
func (v *Values) NamePrefix() string { return v.FilePrefix + v.Program + "." }

// maxNameLen bounds len(FilePrefix)+len(Program). A flush's temporary
// name (tmpfile.Create: "." + FilePrefix + Program + "." + pid + "-" +
// six random characters + ".tmp") is the longest name it uses; it must
// fit NAME_MAX, 255 bytes on Linux and the BSDs.
const maxNameLen = 255 - len(".") - tmpfile.MaxExtra

// checkDir makes sure files can be created in dir, with the temporary
// names a flush of prefix uses, by creating one.
func checkDir(dir, prefix string) error {
	if dir == "" {
		return fmt.Errorf("%w: Dir is empty", ErrConfig)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is in the message already
		}
		return fmt.Errorf("%w: Dir %s: %w", ErrConfig, dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w: Dir %s: not a directory", ErrConfig, dir)
	}
	f, err := tmpfile.Create(dir, prefix)
	if err != nil {
		return fmt.Errorf("%w: Dir %s: cannot create files there: %w", ErrConfig, dir, err)
	}
	os.Remove(f.Name())
	f.Close()
	return nil
}

func resolveDir(v *Values, _ Set) {
	if v.Dir == "" {
		v.Dir = os.TempDir()
	}
}

func resolveVersion(v *Values, _ Set) {
	if v.Version == 0 {
		v.Version = DefaultVersion
	}
}

func checkVersion(v *Values) (string, any) {
	if v.Version != 1 && v.Version != 5 {
		return "only FDR versions 1 and 5 are written", v.Version
	}
	return "", nil
}

func resolveBufferSize(v *Values, _ Set) {
	if v.BufferSize == 0 {
		v.BufferSize = DefaultBufferSize
	}
}

func checkBufferSize(v *Values) (string, any) {
	if n := v.BufferSize; n < buffer.MinSize || uint64(n) > buffer.MaxSize || n%buffer.SizeAlign != 0 {
		return fmt.Sprintf("want a multiple of %d between %d and %d bytes", buffer.SizeAlign, buffer.MinSize, uint64(buffer.MaxSize)), n
	}
	return "", nil
}

// resolveBufferCount: enough buffers that every P can hold one, however
// GOMAXPROCS changes on its own (NumCPU bounds what the Go runtime picks
// by itself; Go 1.25 follows a container's CPU limit while the process
// runs), and some to recycle.
func resolveBufferCount(v *Values, _ Set) {
	if v.BufferCount == 0 {
		v.BufferCount = max(minDefaultBufferCount, 8*goruntime.GOMAXPROCS(0), 2*goruntime.NumCPU()+SpareBuffers)
	}
}

func checkBufferCount(v *Values) (string, any) {
	if n := v.BufferCount; n < buffer.MinCount || uint64(n) > buffer.MaxCount {
		return fmt.Sprintf("want between %d and %d buffers", buffer.MinCount, uint64(buffer.MaxCount)), n
	}
	return "", nil
}

func checkMode(v *Values) (string, any) {
	if v.Mode != buffer.FlightRecorder && v.Mode != buffer.Fill {
		return "want FlightRecorder or Fill", v.Mode
	}
	return "", nil
}

func resolveFlushSignal(v *Values, _ Set) {
	switch v.FlushSignal {
	case nil:
		v.FlushSignal = syscall.SIGUSR1
	case NoSignal:
		v.FlushSignal = nil
	}
}

func checkFlushSignal(v *Values) (string, any) {
	if v.FlushSignal == nil {
		return "", nil
	}
	s, ok := v.FlushSignal.(syscall.Signal)
	if !ok {
		return "not a syscall.Signal", v.FlushSignal
	}
	if why := SignalProblem(s); why != "" {
		return why + "; use a signal the program does not own, such as SIGWINCH, or none and the HTTP endpoint", SignalName(s)
	}
	return "", nil
}

// resolveLogf: goxray's lines never land inside a line of stdout
// (internal/logline).
func resolveLogf(v *Values, _ Set) {
	if v.Logf == nil {
		v.Logf = log.New(logline.Stderr(), "xray: ", log.LstdFlags).Printf
	}
}

func resolveProgram(v *Values, _ Set) {
	if v.Program == "" {
		v.Program = filepath.Base(os.Args[0])
	}
}

func checkProgram(v *Values) (string, any) {
	if v.Program == "" {
		return "empty", `""`
	}
	return checkNamePart(v.Program)
}

func resolveFilePrefix(v *Values, env Set) {
	if v.FilePrefix == "" && !env.Has(FilePrefix) {
		v.FilePrefix = DefaultFilePrefix
	}
}

func checkFilePrefix(v *Values) (string, any) { return checkNamePart(v.FilePrefix) }

func checkNamePart(s string) (string, any) {
	if i := strings.IndexAny(s, "/\x00"); i >= 0 {
		return fmt.Sprintf("a file name part may not contain %q", s[i]), fmt.Sprintf("%q", s)
	}
	return "", nil
}

func resolveMinDuration(v *Values, _ Set) { v.MinDuration = max(v.MinDuration, 0) }

func resolveDirMaxFiles(v *Values, _ Set) { v.DirMaxFiles = limit(v.DirMaxFiles, DefaultDirMaxFiles) }
func resolveDirMaxBytes(v *Values, _ Set) { v.DirMaxBytes = limit(v.DirMaxBytes, DefaultDirMaxBytes) }

// limit is a limit with 0 for the default and a negative value for none.
func limit[T int | int64](v, def T) T {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

func resolveOverheadBudget(v *Values, _ Set) {
	switch v.OverheadBudget {
	case 0:
		v.OverheadBudget = DefaultOverheadBudget
	case NoOverheadBudget:
		v.OverheadBudget = 0
	}
}

func checkOverheadBudget(v *Values) (string, any) {
	if b := v.OverheadBudget; b != b || b < 0 || b > 100 {
		return "want a percentage of the CPU above 0 and at most 100 (or no governor)", b
	}
	return "", nil
}

// checkGoTrace: Go's tracer keeps a flight recorder's window, the last
// seconds, while Fill keeps the session's first records: the Go trace
// beside a Fill file would never cover its calls.
func checkGoTrace(v *Values) (string, any) {
	if v.GoTrace && v.Mode == buffer.Fill {
		return "with Mode Fill: the file keeps the session's first records and the Go trace its last seconds, which never meet; use Mode FlightRecorder (XRAY_FDR_OPTIONS mode=flight-recorder) or leave GoTrace off", v.GoTrace
	}
	return "", nil
}

func resolveGoTraceBytes(v *Values, _ Set) {
	if v.GoTraceBytes == 0 {
		v.GoTraceBytes = max(uint64(max(v.BufferSize, 0))*uint64(max(v.BufferCount, 0)), minGoTraceBytes)
	}
}

// Checked reports whether Validate refuses some values of the setting.
func (e *Entry) Checked() bool { return e.check != nil }
