package fdr

import (
	"bytes"
	"slices"
	"strconv"
)

// UntracedPrefix starts the payload of an untraced event: a custom event
// whose payload is "goxray.untraced" followed by space-separated fields,
// the counts " REASON=N" of the functions the build left uninstrumented
// for each reason, and " func=REASON:NAME" for each function it names
// (see the package documentation). Programs built by `goxray build` write
// the set at the start of every file.
const UntracedPrefix = "goxray.untraced"

// The reasons the build leaves a function untraced. The selection's own
// reasons come first: a function the size threshold, inlining or the
// leaf rule would leave out anyway is counted under that reason, whatever
// else would have excluded it, so the other reasons count only bodies the
// build would otherwise have traced. A reader keeps the counts of a
// reason it does not know (a newer writer's) and counts them in Total.
const (
	UntracedSmall     = "small"     // body below the size threshold
	UntracedInlinable = "inlinable" // the compiler would probably inline it
	UntracedLeaf      = "leaf"      // a small call-free leaf
	UntracedNever     = "never"     // its declaration says //xray:never
	UntracedDirective = "directive" // it carries a //go: directive (nosplit, linkname, …)
	UntracedGenerated = "generated" // in a generated file ("// Code generated … DO NOT EDIT.")
	UntracedCgo       = "cgo"       // in a file that imports "C"
)

// untracedReasons is the reasons this package knows, in the order a
// payload gives their counts, each with its rank: the order of the names
// a build lists and a file carries when not all fit. First come what may
// hide the most time, bodies the build would have traced but for their
// file's kind or a mark on them (cgo calls, deliberate exclusions), then
// call-free leaves (they may be large, and may loop), generated code,
// inlinable bodies and small ones.
var untracedReasons = [...]struct {
	name string
	rank int
}{
	{UntracedSmall, 6}, {UntracedInlinable, 5}, {UntracedLeaf, 3},
	{UntracedNever, 1}, {UntracedDirective, 2}, {UntracedGenerated, 4}, {UntracedCgo, 0},
}

// UntracedReasons returns the reasons this package knows, in the order a
// payload gives their counts.
func UntracedReasons() []string {
	rs := make([]string, len(untracedReasons))
	for i, r := range untracedReasons {
		rs[i] = r.name
	}
	return rs
}

// UntracedRank orders the names a build lists and a file carries when
// not all fit (see untracedReasons); a reason this package does not know
// comes last.
func UntracedRank(reason string) int {
	for _, r := range untracedReasons {
		if r.name == reason {
			return r.rank
		}
	}
	return len(untracedReasons)
}

// MaxUntracedPayload bounds the payload of one untraced event: below the
// largest payload the smallest buffer holds (4096 bytes less its
// preamble), so that SplitUntraced's events fit every file.
const MaxUntracedPayload = 2048

// Untraced is what untraced events say: how many functions the build
// left untraced, by reason, and the names of some of them.
type Untraced struct {
	// Counts maps a reason (UntracedSmall, …, or one a newer writer
	// gives) to the number of functions left untraced for it.
	Counts map[string]int
	Funcs  []UntracedFunc
}

// UntracedFunc is one function the build left untraced, and why.
type UntracedFunc struct {
	Reason string // UntracedSmall, …
	Name   string // linker symbol name, as the function table gives it
}

// Add adds n to reason's count.
func (u *Untraced) Add(reason string, n int) { u.set(reason, u.Counts[reason]+n) }

func (u *Untraced) set(reason string, n int) {
	if u.Counts == nil {
		u.Counts = map[string]int{}
	}
	u.Counts[reason] = n
}

// Total is the number of functions the build left untraced.
func (u Untraced) Total() int {
	n := 0
	for _, c := range u.Counts {
		n += c
	}
	return n
}

// Reasons returns the reasons u counts, those this package knows in
// payload order, then the others in lexical order.
func (u Untraced) Reasons() []string {
	var rs, other []string
	for _, r := range untracedReasons {
		if u.Counts[r.name] != 0 {
			rs = append(rs, r.name)
		}
	}
	for r, n := range u.Counts {
		if n != 0 && UntracedRank(r) == len(untracedReasons) {
			other = append(other, r)
		}
	}
	slices.Sort(other)
	return append(rs, other...)
}

// MergeCounts sets each of u's counts to merge of it and o's, for every
// reason either counts.
func (u *Untraced) MergeCounts(o Untraced, merge func(a, b int) int) {
	for r, n := range o.Counts {
		u.set(r, merge(u.Counts[r], n))
	}
}

// AppendUntracedPayload appends the payload of one untraced event for u:
// the counts that are not zero, then the functions in order. Names hold no
// space (symbol names do not); SplitUntraced keeps each event's payload
// within MaxUntracedPayload.
func AppendUntracedPayload(b []byte, u Untraced) []byte {
	b = append(b, UntracedPrefix...)
	for _, r := range u.Reasons() {
		b = append(b, ' ')
		b = append(b, r...)
		b = append(b, '=')
		b = strconv.AppendInt(b, int64(u.Counts[r]), 10)
	}
	for _, f := range u.Funcs {
		b = appendUntracedFunc(b, f)
	}
	return b
}

func appendUntracedFunc(b []byte, f UntracedFunc) []byte {
	b = append(b, " func="...)
	b = append(b, f.Reason...)
	b = append(b, ':')
	return append(b, f.Name...)
}

// SplitUntraced divides u into the sets of as few events as keep each
// payload within MaxUntracedPayload: the first carries the counts, every
// one as many functions as fit, in order. A function whose field alone
// would not fit (a name of about 2 KB), or whose name holds a space, is
// left out: the counts still include it.
func SplitUntraced(u Untraced) []Untraced {
	first := u
	first.Funcs = nil
	cur := first
	n := len(AppendUntracedPayload(nil, cur))
	var out []Untraced
	for _, f := range u.Funcs {
		w := len(appendUntracedFunc(nil, f))
		if len(UntracedPrefix)+w > MaxUntracedPayload || bytes.IndexByte([]byte(f.Name), ' ') >= 0 || f.Name == "" {
			continue
		}
		if n+w > MaxUntracedPayload {
			out = append(out, cur)
			cur, n = Untraced{}, len(UntracedPrefix)
		}
		cur.Funcs = append(cur.Funcs, f)
		n += w
	}
	return append(out, cur)
}

// ParseUntraced returns what one untraced event's payload says, and false
// when data is not one (a bad count of a reason it knows, or a bad
// function field, makes it not one). A field it does not know is a count
// of a newer writer's reason when its value is a count, and is ignored
// otherwise. A reader merges the events of a
// file: the counts are on the first, the functions spread over all, and
// a file repeats the whole set, so a reader of several files takes each
// count's largest value and the union of the functions.
func ParseUntraced(data []byte) (Untraced, bool) {
	rest, ok := bytes.CutPrefix(data, []byte(UntracedPrefix))
	if !ok || len(rest) > 0 && rest[0] != ' ' {
		return Untraced{}, false
	}
	var u Untraced
	for _, f := range bytes.Fields(rest) {
		k, v, ok := bytes.Cut(f, []byte("="))
		if !ok {
			return Untraced{}, false
		}
		if string(k) == "func" {
			r, name, ok := bytes.Cut(v, []byte(":"))
			if !ok || len(r) == 0 || len(name) == 0 {
				return Untraced{}, false
			}
			u.Funcs = append(u.Funcs, UntracedFunc{Reason: string(r), Name: string(name)})
			continue
		}
		n, err := strconv.Atoi(string(v))
		if err != nil || n < 0 {
			if UntracedRank(string(k)) < len(untracedReasons) {
				return Untraced{}, false
			}
			continue // a newer writer's field that is not a count
		}
		if n > 0 && len(k) > 0 {
			u.set(string(k), n)
		}
	}
	return u, true
}
