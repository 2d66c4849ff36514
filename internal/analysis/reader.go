package analysis

import (
	"io"

	"github.com/goxray/xray/fdr"
)

// Event is one expanded event, as fdr.Reader.Next returns it.
type Event = fdr.Event

// Reader streams a trace's events in bounded memory (fdr.Reader); its
// Filter field narrows them (go tool goxray's -trace: RequestFilter.Keeper).
type Reader = fdr.Reader

// NewReader reads and checks the file header of r (fdr.NewReader).
func NewReader(r io.Reader) (*Reader, error) { return fdr.NewReader(r) }

// threadKey is an event's thread: its (pid, tid).
type threadKey struct{ pid, tid int32 }
