package engine

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// Runtime patching: compiler-rt's __xray_patch_function and
// __xray_unpatch_function, for ids. Every id starts patched (recorded).
//
// The hot path reads one word, patches: nil while every id is patched, so
// the common case costs a load and a not-taken branch. Otherwise it points
// at an immutable patchSet, replaced (copy-on-write, under patchMu) on
// every change, so readers never see a half-updated set.
var (
	patches unsafe.Pointer // *patchSet
	patchMu sync.Mutex
)

// patchSet says which ids are unpatched: bit id of bits, and every id past
// the bits when rest is 1 (UnpatchAll).
type patchSet struct {
	rest uint64
	bits []uint64
}

// unpatched reports whether calls of id are to be ignored.
func unpatched(id uint32) bool { return (*patchSet)(atomic.LoadPointer(&patches)).has(id) }

// has reports whether id is in the set; the nil set is empty.
func (ps *patchSet) has(id uint32) bool {
	if ps == nil {
		return false
	}
	if i := id >> 6; int(i) < len(ps.bits) {
		return ps.bits[i]>>(id&63)&1 != 0
	}
	return ps.rest != 0
}

// Patch makes calls of id recorded again.
func Patch(id uint32) { setPatched(id, true) }

// Unpatch makes calls of id ignored: Enter, Exit, TailExit and EnterArgs of
// id record nothing (and count no drop) until Patch(id).
func Unpatch(id uint32) { setPatched(id, false) }

func setPatched(id uint32, on bool) {
	patchMu.Lock()
	defer patchMu.Unlock()
	old := (*patchSet)(atomic.LoadPointer(&patches))
	ns := &patchSet{}
	if old != nil {
		ns.rest = old.rest
		ns.bits = append([]uint64(nil), old.bits...)
	}
	i := int(id >> 6)
	for len(ns.bits) <= i {
		ns.bits = append(ns.bits, -ns.rest) // rest 1 → all ones
	}
	if on {
		ns.bits[i] &^= 1 << (id & 63)
	} else {
		ns.bits[i] |= 1 << (id & 63)
	}
	publishPatches(ns)
}

// PatchAll records every id again.
func PatchAll() {
	patchMu.Lock()
	defer patchMu.Unlock()
	publishPatches(nil)
}

// UnpatchAll ignores every id until Patch or PatchAll.
func UnpatchAll() {
	patchMu.Lock()
	defer patchMu.Unlock()
	publishPatches(&patchSet{rest: 1})
}

func publishPatches(ns *patchSet) {
	if ns != nil && ns.rest == 0 {
		all := true
		for _, w := range ns.bits {
			if w != 0 {
				all = false
				break
			}
		}
		if all {
			ns = nil // back to the free check
		}
	}
	atomic.StorePointer(&patches, unsafe.Pointer(ns))
	taint.Store(unionPatches(taint.Load(), ns))
	refreshGates()
}

// taint holds every id unpatched at some moment since the session began
// (resetTaint, at Start): a call of such an id that began before the
// window may have begun while it was unpatched, without a record, so the
// open-call reading cannot vouch for it (openstack.go). Written under
// patchMu; immutable once stored.
var taint atomic.Pointer[patchSet]

// resetTaint starts a session's taint: the ids unpatched now.
func resetTaint() {
	patchMu.Lock()
	defer patchMu.Unlock()
	taint.Store((*patchSet)(atomic.LoadPointer(&patches)))
}

// unionPatches returns the ids in a or b (either may be nil, the empty
// set), sharing neither's memory with a set it would change.
func unionPatches(a, b *patchSet) *patchSet {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	u := &patchSet{rest: a.rest | b.rest}
	for i := range max(len(a.bits), len(b.bits)) {
		u.bits = append(u.bits, a.word(i)|b.word(i))
	}
	return u
}

// word is the i-th word of the set's bits, rest past them.
func (ps *patchSet) word(i int) uint64 {
	if i < len(ps.bits) {
		return ps.bits[i]
	}
	return -ps.rest
}
