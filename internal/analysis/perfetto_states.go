package analysis

// StateSlice is one scheduling state of a goroutine, from the Go
// execution trace beside a goxray trace, on the trace's clock (TSC).
type StateSlice struct {
	Start, End uint64
	Name       string // "running", "runnable", "syscall", "blocked: REASON"
	Site       string // blocked: where
}

// Goroutines lists the (pid, tid) of every goroutine track, in track order.
func (s *PerfettoScan) Goroutines() [][2]int32 {
	out := make([][2]int32, len(s.order))
	for i, k := range s.order {
		out[i] = [2]int32{k.pid, k.tid}
	}
	return out
}

// stateUUID keeps state tracks apart from thread (1…n) and process tracks.
func stateUUID(thread uint64) uint64 { return 1<<61 | thread }

// AddStates writes a track named "state" under the goroutine's track
// (pid, tid), with a slice per state (the site of a blocked one as an
// annotation). Slices that end before the trace's first event are left
// out; the goroutine must have a track (Goroutines).
func (pw *PerfettoWriter) AddStates(pid, tid int32, slices []StateSlice) {
	thread, ok := pw.uuids[threadKey{pid, tid}]
	if !ok || len(slices) == 0 {
		return
	}
	uuid := stateUUID(thread)
	var td []byte
	td = appendUint(td, pfTDUUID, uuid)
	td = appendString(td, pfTDName, "state")
	td = appendUint(td, pfTDParent, thread)
	pw.packet(func(b []byte) []byte { return appendBytes(b, pfTrackDescriptor, td) })
	for _, s := range slices {
		if s.End < pw.scan.First {
			continue
		}
		pw.stateEvent(uuid, pw.nanos(s.Start), pfSliceBegin, s.Name, s.Site)
		pw.stateEvent(uuid, pw.nanos(s.End), pfSliceEnd, "", "")
		pw.States++
	}
}

func (pw *PerfettoWriter) stateEvent(track, ts, typ uint64, name, site string) {
	te := pw.te[:0]
	pw.intern = pw.intern[:0]
	te = appendUint(te, pfTEType, typ)
	te = appendUint(te, pfTETrackUUID, track)
	if name != "" {
		te = appendUint(te, pfTENameIID, pw.iid(pw.names, pfIDEventNames, name))
	}
	if site != "" {
		te = pw.annotation(te, "site", func(b []byte) []byte { return appendString(b, pfDAString, site) })
	}
	pw.te = te
	pw.packet(func(b []byte) []byte {
		b = appendUint(b, pfTimestamp, ts)
		b = appendBytes(b, pfTrackEvent, te)
		if len(pw.intern) > 0 {
			b = appendBytes(b, pfInternedData, pw.intern)
		}
		return b
	})
}
