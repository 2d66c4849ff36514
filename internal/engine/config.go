package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/goxray/xray/internal/buffer"
	"github.com/goxray/xray/internal/xrayflags"
)

// ErrConfig is wrapped by every error Start returns for a Config it
// refuses; the message names the field (as xray.Options names it).
var ErrConfig = errors.New("xray: invalid options")

// maxNameLen bounds len(FilePrefix)+len(Program). A flush creates
// "." + FilePrefix + Program + "." + up to 10 random digits + ".tmp" (see
// flush.WriteFiles), the longest name it uses; it must fit NAME_MAX, 255
// bytes on Linux and the BSDs.
const maxNameLen = 255 - len("..") - 10 - len(".tmp")

// Validate is the one place a configuration is checked: xray.Start calls it
// through Start, after filling in defaults. The limits are the buffer
// queue's own (buffer.MinSize…), the signals those XRAY_FDR_OPTIONS
// refuses (xrayflags.RefusedSignal). Dir must exist, be a directory and
// take a new file: Validate creates and removes one, so that a flush
// cannot fail later for a reason Start could have seen.
func (c *Config) Validate() error {
	bad := func(field string, v any, why string, args ...any) error {
		return fmt.Errorf("%w: %s %v: %s", ErrConfig, field, v, fmt.Sprintf(why, args...))
	}
	if c.Version != 1 && c.Version != 5 {
		return bad("Version", c.Version, "only FDR versions 1 and 5 are written")
	}
	if c.BufferSize < buffer.MinSize || uint64(c.BufferSize) > buffer.MaxSize || c.BufferSize%buffer.SizeAlign != 0 {
		return bad("BufferSize", c.BufferSize, "want a multiple of %d between %d and %d bytes", buffer.SizeAlign, buffer.MinSize, uint64(buffer.MaxSize))
	}
	if c.BufferCount < buffer.MinCount || uint64(c.BufferCount) > buffer.MaxCount {
		return bad("BufferCount", c.BufferCount, "want between %d and %d buffers", buffer.MinCount, buffer.MaxCount)
	}
	if b := c.OverheadBudget; b != b || b < 0 || b > 100 {
		return bad("OverheadBudget", b, "want a percentage of the CPU above 0 and at most 100 (or no governor)")
	}
	if c.Mode != buffer.FlightRecorder && c.Mode != buffer.Fill {
		return bad("Mode", c.Mode, "want FlightRecorder or Fill")
	}
	if c.MinDuration < 0 {
		return bad("MinDuration", c.MinDuration, "negative")
	}
	if c.FlushSignal != nil {
		s, ok := c.FlushSignal.(syscall.Signal)
		if !ok {
			return bad("FlushSignal", c.FlushSignal, "not a syscall.Signal")
		}
		if why := xrayflags.SignalProblem(s); why != "" {
			return bad("FlushSignal", signalName(s), "%s; use a signal the program does not own, such as SIGWINCH, or none and the HTTP endpoint", why)
		}
	}
	for _, f := range [...]struct{ name, v string }{{"Program", c.Program}, {"FilePrefix", c.FilePrefix}} {
		if i := strings.IndexAny(f.v, "/\x00"); i >= 0 {
			return bad(f.name, fmt.Sprintf("%q", f.v), "a file name part may not contain %q", f.v[i])
		}
	}
	if c.Program == "" {
		return bad("Program", `""`, "empty")
	}
	if n := len(c.FilePrefix) + len(c.Program); n > maxNameLen {
		return bad("FilePrefix+Program", n, "bytes: file names would exceed 255 bytes; keep the two under %d", maxNameLen+1)
	}
	return checkDir(c.Dir, "."+c.FilePrefix+c.Program+".*.tmp")
}

// checkDir makes sure files can be created in dir, with the pattern a
// flush uses, by creating one.
func checkDir(dir, pattern string) error {
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
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return fmt.Errorf("%w: Dir %s: cannot create files there: %w", ErrConfig, dir, err)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}
