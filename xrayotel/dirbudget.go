package xrayotel

import (
	"encoding/hex"
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/goxray/xray/export"
)

// Defaults bounding Options.Dir. A slow request's file and map take tens
// of kilobytes to a few megabytes; at one a second (bursts of ten) a
// service that is slow all the time fills the 1000 files (500 requests)
// in about eight minutes and then keeps the latest, and never more than
// 256 MiB.
const (
	DefaultDirMaxFiles        = 1000
	DefaultDirMaxBytes  int64 = 256 << 20
	DefaultDirPerSecond       = 1.0
	DirBurst                  = 10
)

// requestPrefix starts the names of the per-request files.
const requestPrefix = "xray-request."

// requestFile recognises the per-request files' names exactly:
// xray-request.<trace id>-<span id>.XXXXXX and the same with .map.
func requestFile(name string) bool {
	prefix, ok := export.FilePrefix(name)
	rest, mine := strings.CutPrefix(prefix, requestPrefix)
	if !ok || !mine || len(rest) != 32+1+16+1 || rest[32] != '-' || rest[49] != '.' {
		return false
	}
	return isHex(rest[:32]) && isHex(rest[33:49])
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

// newDirBudget builds the budget of o.Dir from the Options' limits: 0
// takes the default, a negative value means no limit.
func newDirBudget(o Options) *export.FileBudget {
	if o.Dir == "" {
		return nil
	}
	lim := export.FileLimits{MaxFiles: o.DirMaxFiles, MaxBytes: o.DirMaxBytes, PerSecond: o.DirPerSecond, Burst: DirBurst}
	if lim.MaxFiles == 0 {
		lim.MaxFiles = DefaultDirMaxFiles
	}
	if lim.MaxBytes == 0 {
		lim.MaxBytes = DefaultDirMaxBytes
	}
	if lim.PerSecond == 0 {
		lim.PerSecond = DefaultDirPerSecond
	}
	lim.MaxFiles, lim.MaxBytes, lim.PerSecond = max(lim.MaxFiles, 0), max(lim.MaxBytes, 0), max(lim.PerSecond, 0)
	return export.NewFileBudget(o.Dir, requestFile, lim).Ledger(requestPrefix)
}

// dirCounts is what the Dir budget skipped and deleted so far.
func (p *SpanProcessor) dirCounts() export.FileCounts {
	if p.dirb == nil {
		return export.FileCounts{}
	}
	return p.dirb.Counts()
}

// dirAttrs says on a summary span whether this request's file was skipped
// and what the budget has skipped and deleted so far.
func (p *SpanProcessor) dirAttrs(skipped bool) []attribute.KeyValue {
	if p.dirb == nil {
		return nil
	}
	c := p.dirb.Counts()
	a := []attribute.KeyValue{
		attribute.Int64("goxray.files_skipped", int64(c.Skipped)),
		attribute.Int64("goxray.files_deleted", int64(c.Deleted)),
	}
	if skipped {
		a = append(a, attribute.String("goxray.file_skipped", "Options.DirPerSecond: too many slow requests' files a second"))
	}
	return a
}
