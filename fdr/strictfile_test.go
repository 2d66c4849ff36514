package fdr

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerifyStrictFileAgreesWithParseStrict: the streaming check rejects
// exactly what ParseStrict rejects, with the same error, and counts what
// it accepts the same way.
func TestVerifyStrictFileAgreesWithParseStrict(t *testing.T) {
	dir := t.TempDir()
	check := func(name string, data []byte) {
		p := filepath.Join(dir, strings.ReplaceAll(name, "/", "_"))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		f, perr := ParseStrict(data)
		sum, serr := VerifyStrictFile(p)
		switch {
		case (perr == nil) != (serr == nil) || perr != nil && perr.Error() != serr.Error():
			t.Errorf("%s: ParseStrict %v, VerifyStrictFile %v", name, perr, serr)
		case perr == nil:
			var recs int64
			for _, b := range f.Blocks {
				recs += int64(len(b.Records))
			}
			if sum.Blocks != len(f.Blocks) || sum.Records != recs || sum.Extents != f.Extents || sum.Unused != f.Unused {
				t.Errorf("%s: summary %+v; ParseStrict: %d blocks, %d records, %d extents, %d unused",
					name, sum, len(f.Blocks), recs, f.Extents, f.Unused)
			}
		}
	}
	for _, bf := range strictBadFiles() {
		check("bad "+bf.name, bf.data)
	}
	for _, gf := range strictGoodFiles() {
		check("good "+gf.name, gf.data)
	}
}
