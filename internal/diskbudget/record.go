package diskbudget

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// fileID is what tells the file a writer wrote from any other file given
// the same name since: its inode (dev, ino; zero where the platform has
// none), size and modification time. A file changes none of them
// without being written to, and a new file at the name has another inode.
type fileID struct {
	dev, ino uint64
	size     int64
	mtime    int64 // ns since the epoch
}

// entry is one file of the record: a file the writer wrote, with its
// identity when written.
type entry struct {
	name string // base name in the directory
	id   fileID
}

// ownFile returns the identity of the file at path when it is one the
// writer may count and delete: a regular file (not a symlink, not a
// directory) of this process's user; false for anything else, or no
// file.
func ownFile(path string) (fileID, bool) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return fileID{}, false
	}
	return identify(fi)
}

// current reports whether e's file is still the one recorded.
func (b *Budget) current(e entry) bool {
	id, ok := ownFile(filepath.Join(b.dir, e.name))
	return ok && id == e.id
}

// LedgerSuffix ends the name of a ledger file (Ledger), before the
// user's id.
const LedgerSuffix = ".owned"

// LedgerName is the base name of the ledger of name: a hidden file, one
// per user, so that programs of the same name run by different users keep
// their records apart. It is never a name Pattern or tmpfile.Owner
// recognises.
func LedgerName(name string) string {
	return "." + strings.TrimSuffix(name, ".") + LedgerSuffix + "-" + strconv.Itoa(os.Geteuid())
}

// IsLedger reports whether name is the name of a ledger (LedgerName).
func IsLedger(name string) bool {
	rest, ok := strings.CutPrefix(name, ".")
	if !ok {
		return false
	}
	i := strings.LastIndex(rest, LedgerSuffix+"-")
	if i < 0 {
		return false
	}
	_, err := strconv.ParseUint(rest[i+len(LedgerSuffix)+1:], 10, 32)
	return err == nil
}

// A ledger holds one line per recorded file, oldest first:
// "<quoted name> <dev> <ino> <size> <mtime ns>". Lines that do not parse
// (a ledger cut short by a crash) are dropped: a file the record loses is
// left alone, never deleted.
func parseLedger(r io.Reader) []entry {
	var out []entry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		q, err := strconv.QuotedPrefix(line)
		if err != nil {
			continue
		}
		name, err := strconv.Unquote(q)
		if err != nil || name == "" || strings.ContainsAny(name, "/\x00") {
			continue
		}
		f := strings.Fields(line[len(q):])
		if len(f) != 4 {
			continue
		}
		var n [4]int64
		ok := true
		for i, s := range f {
			v, err := strconv.ParseInt(s, 10, 64)
			ok = ok && err == nil
			n[i] = v
		}
		if ok {
			out = append(out, entry{name, fileID{uint64(n[0]), uint64(n[1]), n[2], n[3]}})
		}
	}
	return out
}

func formatLedger(es []entry) []byte {
	var b bytes.Buffer
	for _, e := range es {
		fmt.Fprintf(&b, "%s %d %d %d %d\n", strconv.Quote(e.name), int64(e.id.dev), int64(e.id.ino), e.id.size, e.id.mtime)
	}
	return b.Bytes()
}

// ledger is an open, locked ledger file.
type ledger struct{ f *os.File }

// openLedger opens (creating it) and locks the ledger at path, and
// returns it with the entries it holds. It refuses a ledger it could be
// tricked into writing elsewhere through: anything but a regular file of
// this process's user with one link (a symlink, or a hard link to
// another file, planted at its name).
func openLedger(path string) (*ledger, []entry, error) {
	f, err := openNoFollow(path)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && (!fi.Mode().IsRegular() || !soleOwnLink(fi)) {
		err = fmt.Errorf("%s is not a file of this user's with one link", path)
	}
	if err == nil {
		err = lock(f)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return &ledger{f}, parseLedger(f), nil
}

// store replaces the ledger's entries with es and unlocks it.
func (l *ledger) store(es []entry) error {
	b := formatLedger(es)
	err := l.f.Truncate(0)
	if err == nil {
		_, err = l.f.WriteAt(b, 0)
	}
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}
