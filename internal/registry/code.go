package registry

import (
	"runtime"
	"sync/atomic"
)

// Names read from the code. The automatic instrumentation registers each
// function under the name its source predicts, but the compiler's names
// for function literals follow its own choices (what it inlines, how it
// scopes a range-over-func loop's body), which change between releases. So
// the generated code also hands over, for each id, a word where the entry
// of the function's code appears (SetCode): at initialization for a
// declared function (its func value) and when a literal is first made (the
// closure's code pointer), which is always before it can run. The id's
// name is then runtime.FuncForPC's for that entry, which is the name
// stacks, panics and pprof show (Func.PC keeps the entry). A second word
// gives the entry of its traced copy, where goxray build records its calls
// (Func.CopyPC), so that a frame of a stack can be told to be the
// function's or its traced call's by its entry (ByPC). The words are read
// off the hot path, whenever a name is looked up: the writer bumps a
// counter after each word it fills (CodeStored), so a lookup with nothing
// new to read costs one atomic load. An id whose word stays empty (a
// literal never made, a generic function, whose code exists once per
// instantiation shape) keeps the name it was registered under.

// stored counts the words written so far (CodeStored); resolved is its
// value when resolve last read the words, pending the ids with a word
// that was empty then. resolved and pending are guarded by mu.
var (
	stored   atomic.Uint64
	resolved uint64
	pending  []uint32
)

// SetCode tells the registry where the entries of id's code and of its
// traced copy's will appear: words that are 0 until then and are written
// once (either may be nil). A registered id (from FirstRegistered) takes
// one pair; SetCode ignores other ids and a second pair.
func SetCode(id uint32, code, copy *atomic.Uintptr) {
	if code == nil && copy == nil {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	if id < FirstRegistered || int(id-FirstRegistered) >= len(funcs) {
		return
	}
	e := entry(id)
	if e.code != nil || e.copy != nil {
		return
	}
	e.code, e.copy = code, copy
	pending = append(pending, id)
	resolved = ^uint64(0) // read the new words at the next lookup
}

// CodeStored says that a word given to SetCode was written. Its writer
// calls it after the write, once per word.
func CodeStored() { stored.Add(1) }

// resolve renames the ids whose code appeared since it last ran, and
// records the entries of the copies that appeared. Called with mu held.
func resolve() {
	n := stored.Load()
	if n == resolved {
		return
	}
	resolved = n
	kept := pending[:0]
	for _, id := range pending {
		e := entry(id)
		if e.PC == 0 && e.code != nil {
			if pc := e.code.Load(); pc != 0 {
				name(e, pc)
			}
		}
		if e.CopyPC == 0 && e.copy != nil {
			if pc := e.copy.Load(); pc != 0 {
				e.CopyPC = pc
				byPC[pc] = id
			}
		}
		if e.PC == 0 && e.code != nil || e.CopyPC == 0 && e.copy != nil {
			kept = append(kept, id)
		}
	}
	pending = kept
}

// name gives e the name and entry of the function whose code starts at
// pc. The name goes to the id unless another id with code already has
// it; the name e had goes with it unless another id has it too.
func name(e *Func, pc uintptr) {
	f := runtime.FuncForPC(pc)
	if f == nil {
		return
	}
	e.PC = f.Entry()
	byPC[e.PC] = e.ID
	n := f.Name()
	if n == e.Name {
		return
	}
	if byName[e.Name] == e.ID {
		delete(byName, e.Name)
	}
	e.Name = n
	if other, ok := byName[n]; !ok || entry(other).PC == 0 {
		byName[n] = e.ID
	}
}

// ByPC returns the id whose code or traced copy's code (Func.PC, CopyPC)
// starts at entry, if known.
func ByPC(entry uintptr) (uint32, bool) {
	mu.Lock()
	defer mu.Unlock()
	resolve()
	id, ok := byPC[entry]
	return id, ok
}

// KeyOf returns the name id was registered under, which generated code
// uses to refer to it (xrayauto.RegisterDispatch): the name its source
// predicts, even where the name read from its code (Func.Name) differs.
func KeyOf(id uint32) string {
	mu.Lock()
	defer mu.Unlock()
	if id == 0 || id >= FirstRegistered && int(id-FirstRegistered) >= len(funcs) {
		return ""
	}
	if e := entry(id); e != nil {
		return e.key
	}
	return ""
}

// IDOfKey returns the id registered under key (see KeyOf), if any.
func IDOfKey(key string) (uint32, bool) {
	mu.Lock()
	defer mu.Unlock()
	id, ok := byKey[key]
	return id, ok
}
