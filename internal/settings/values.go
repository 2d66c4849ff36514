package settings

import (
	"errors"
	"os"
	"time"

	"github.com/goxray/xray/internal/buffer"
	"github.com/goxray/xray/internal/traceset"
)

// Values holds one value per setting, under the name xray.Options gives
// it. xray.Options converts to Values (the compiler keeps the two
// identical, field for field), and the engine's Config is Values after
// Resolve: as given, a zero field means "the default" and some negative
// values mean "none"; after Resolve every field holds what the session
// uses. Each field's meaning is documented on xray.Options and its row
// in Table.
type Values struct {
	Dir            string
	Version        int
	BufferSize     int
	BufferCount    int
	Mode           buffer.Mode
	FlushSignal    os.Signal // after Resolve: nil listens to none
	Logf           func(format string, args ...any)
	Program        string
	FilePrefix     string
	MinDuration    time.Duration
	DirMaxFiles    int   // after Resolve: 0 is no bound
	DirMaxBytes    int64 // after Resolve: 0 is no bound
	NoFinalFile    bool
	FlushOnExit    bool
	FastClock      bool
	OverheadBudget float64 // after Resolve: 0 is no governor
	GoTrace        bool
	GoTraceBytes   uint64
	IgnoreEnv      bool
}

// ErrConfig is wrapped by every error Validate returns; the message names
// the field.
var ErrConfig = errors.New("xray: invalid options")

// NoSignal as Values.FlushSignal (before Resolve) listens to no signal;
// xray.NoSignal is this value.
var NoSignal os.Signal = noSignal{}

type noSignal struct{}

func (noSignal) String() string { return "no signal" }
func (noSignal) Signal()        {}

// Defaults of zero fields.
const (
	DefaultVersion        = 5
	DefaultBufferSize     = 64 << 10
	DefaultFilePrefix     = traceset.DefaultPrefix // compiler-rt's xray_logfile_base
	DefaultOverheadBudget = 2.0                    // percent of the process's CPU time
	// NoOverheadBudget as OverheadBudget turns the governor off.
	NoOverheadBudget = -1.0
	// DefaultDirMaxFiles and DefaultDirMaxBytes bound what flushes leave
	// in Dir: 32 traces with their maps, and 1 GiB, several windows of
	// the largest default buffer memory.
	DefaultDirMaxFiles       = 64
	DefaultDirMaxBytes int64 = 1 << 30
	// minDefaultBufferCount: the flight recorder keeps a useful window
	// even on one P.
	minDefaultBufferCount = 64
	// minGoTraceBytes is the smallest default GoTraceBytes: the Go trace
	// records scheduling events, fewer than a traced service's calls, so
	// the ring's bytes span at least the ring's usual window.
	minGoTraceBytes = 4 << 20
)

// SpareBuffers is how many buffers a flight recorder needs beyond one per
// P: one sealed buffer to recycle while every P holds one, and one for a
// sealer descheduled before its buffer enters the sealed FIFO. With fewer,
// a P that needs a buffer while the others hold theirs drops its records.
const SpareBuffers = 2
