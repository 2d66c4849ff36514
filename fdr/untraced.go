package fdr

import (
	"bytes"
	"strconv"
)

// UntracedPrefix starts the payload of an untraced event: a custom event
// whose payload is "goxray.untraced" followed by space-separated fields,
// the counts " REASON=N" of the functions the build left uninstrumented
// for each reason (UntracedReasons), and " func=REASON:NAME" for each
// function it names (see the package documentation). Programs built by
// `goxray build` write the set at the start of every file.
const UntracedPrefix = "goxray.untraced"

// The reasons the build leaves a function untraced. The selection's own
// reasons come first: a function the size threshold, inlining or the
// leaf rule would leave out anyway is counted under that reason, whatever
// else would have excluded it, so the other reasons count only bodies the
// build would otherwise have traced.
const (
	UntracedSmall     = "small"     // body below the size threshold
	UntracedInlinable = "inlinable" // the compiler would probably inline it
	UntracedLeaf      = "leaf"      // a small call-free leaf
	UntracedNever     = "never"     // its declaration says //xray:never
	UntracedDirective = "directive" // it carries a //go: directive (nosplit, linkname, …)
	UntracedGenerated = "generated" // in a generated file ("// Code generated … DO NOT EDIT.")
	UntracedCgo       = "cgo"       // in a file that imports "C"
)

// UntracedReasons lists the reasons, in the order a payload gives the
// counts.
var UntracedReasons = [...]string{UntracedSmall, UntracedInlinable, UntracedLeaf, UntracedNever, UntracedDirective, UntracedGenerated, UntracedCgo}

// MaxUntracedPayload bounds the payload of one untraced event: below the
// largest payload the smallest buffer holds (4096 bytes less its
// preamble), so that SplitUntraced's events fit every file.
const MaxUntracedPayload = 2048

// Untraced is what untraced events say: how many functions the build
// left untraced, by reason, and the names of some of them.
type Untraced struct {
	Small, Inlinable, Leaf           int
	Never, Directive, Generated, Cgo int
	Funcs                            []UntracedFunc
}

// UntracedFunc is one function the build left untraced, and why.
type UntracedFunc struct {
	Reason string // one of UntracedReasons
	Name   string // linker symbol name, as the function table gives it
}

// UntracedRank orders the names a build lists and a file carries when
// not all fit: first what may hide the most time, bodies the build would
// have traced but for their file's kind or a mark on them (cgo calls,
// deliberate exclusions), then call-free leaves (they may be large, and
// may loop), generated code, inlinable bodies, small ones; a reason it
// does not know (a newer writer's) comes last.
func UntracedRank(reason string) int {
	for i, r := range untracedRanked {
		if r == reason {
			return i
		}
	}
	return len(untracedRanked)
}

var untracedRanked = [...]string{UntracedCgo, UntracedNever, UntracedDirective, UntracedLeaf, UntracedGenerated, UntracedInlinable, UntracedSmall}

// Count returns the count of reason's functions, nil for a reason Untraced
// does not know.
func (u *Untraced) Count(reason string) *int {
	switch reason {
	case UntracedSmall:
		return &u.Small
	case UntracedInlinable:
		return &u.Inlinable
	case UntracedLeaf:
		return &u.Leaf
	case UntracedNever:
		return &u.Never
	case UntracedDirective:
		return &u.Directive
	case UntracedGenerated:
		return &u.Generated
	case UntracedCgo:
		return &u.Cgo
	}
	return nil
}

// Total is the number of functions the build left untraced.
func (u Untraced) Total() int {
	n := 0
	for _, r := range UntracedReasons {
		n += *u.Count(r)
	}
	return n
}

// MergeCounts sets each of u's counts to merge of it and o's.
func (u *Untraced) MergeCounts(o Untraced, merge func(a, b int) int) {
	for _, r := range UntracedReasons {
		*u.Count(r) = merge(*u.Count(r), *o.Count(r))
	}
}

// AppendUntracedPayload appends the payload of one untraced event for u:
// the counts that are not zero, then the functions in order. Names hold no
// space (symbol names do not); SplitUntraced keeps each event's payload
// within MaxUntracedPayload.
func AppendUntracedPayload(b []byte, u Untraced) []byte {
	b = append(b, UntracedPrefix...)
	for _, r := range UntracedReasons {
		if n := *u.Count(r); n != 0 {
			b = append(b, ' ')
			b = append(b, r...)
			b = append(b, '=')
			b = strconv.AppendInt(b, int64(n), 10)
		}
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
// when data is not one (fields it does not know are ignored, a bad count
// or function field makes it not one). A reader merges the events of a
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
		dst := u.Count(string(k))
		if dst == nil {
			continue
		}
		n, err := strconv.Atoi(string(v))
		if err != nil || n < 0 {
			return Untraced{}, false
		}
		*dst = n
	}
	return u, true
}
