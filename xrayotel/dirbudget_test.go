package xrayotel

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/goxray/xray"
	"github.com/goxray/xray/internal/diskbudget"
)

// dirFiles counts the processor's own files in dir and their bytes, and
// fails if anything else there changed (but for the budget's ledger).
func dirFiles(t *testing.T, dir string, foreign string) (files int, bytes int64) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	sawForeign := false
	for _, e := range ents {
		if e.Name() == foreign {
			sawForeign = true
			continue
		}
		if e.Name() == diskbudget.LedgerName(requestPrefix) {
			continue
		}
		if !requestFile(e.Name()) {
			t.Errorf("unexpected file %s", e.Name())
			continue
		}
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		files++
		bytes += fi.Size()
	}
	if !sawForeign {
		t.Errorf("%s was deleted", foreign)
	}
	return files, bytes
}

// smallTracing starts tracing with little buffer memory: each slow span's
// extraction copies it all.
func smallTracing(t *testing.T) {
	t.Helper()
	err := xray.Start(xray.Options{Dir: t.TempDir(), FlushSignal: xray.NoSignal, NoFinalFile: true, IgnoreEnv: true,
		BufferSize: 4096, BufferCount: 8, Logf: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { xray.Stop() })
}

func burst(t *testing.T, o Options, n int) (Stats, []attribute.Value) {
	t.Helper()
	o.Threshold, o.QueueSize, o.Logf = -1, n+1, func(string, ...any) {}
	tr, exp, p, tp := provider(t, o)
	for range n {
		_, span := tr.Start(context.Background(), "request")
		span.End()
	}
	tp.ForceFlush(context.Background())
	var skipped []attribute.Value
	for _, s := range exp.GetSpans() {
		if s.Name != SummaryName {
			continue
		}
		if v, ok := attr(s, "goxray.file_skipped"); ok {
			skipped = append(skipped, v)
		}
	}
	return p.Stats(), skipped
}

// TestDirBurstStaysWithinBudget: a burst of 10 000 slow spans writes a
// burst's worth of files with the default limits, says on every other
// summary span that its file was skipped, and counts them.
func TestDirBurstStaysWithinBudget(t *testing.T) {
	smallTracing(t)
	dir := t.TempDir()
	const foreign = "xray-request.notours"
	if err := os.WriteFile(filepath.Join(dir, foreign), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	const n = 10000
	// No CPU budget: a span it sheds writes no file either (counted in
	// Shed), and on a slow machine it could leave too few spans to reach
	// the rate limit this test is about.
	st, skipped := burst(t, Options{Dir: dir, MaxCPU: -1}, n)
	files, bytes := dirFiles(t, dir, foreign)
	if files > DefaultDirMaxFiles || bytes > DefaultDirMaxBytes || files == 0 {
		t.Errorf("%d files, %d bytes: outside the default budget", files, bytes)
	}
	if st.Slow != n || st.FilesSkipped == 0 || uint64(files/2)+st.FilesSkipped+st.Shed != n || uint64(len(skipped)) != st.FilesSkipped {
		t.Errorf("%d slow spans: %d files written, %d skipped (%d summaries say so), %d shed", st.Slow, files/2, st.FilesSkipped, len(skipped), st.Shed)
	}
	t.Logf("%d slow spans: %d files (%d bytes), %d skipped, %d shed", n, files, bytes, st.FilesSkipped, st.Shed)
}

// TestDirBudgetDeletesOldest: without a rate limit, the file budget keeps
// the directory at DirMaxFiles by deleting the processor's oldest files.
func TestDirBudgetDeletesOldest(t *testing.T) {
	smallTracing(t)
	dir := t.TempDir()
	const foreign = "xray-request.0123456789abcdef0123456789abcdef-0123456789abcdef.ABCDEF.txt"
	if err := os.WriteFile(filepath.Join(dir, foreign), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	const n, maxFiles = 300, 20
	st, skipped := burst(t, Options{Dir: dir, DirPerSecond: -1, DirMaxFiles: maxFiles, MaxCPU: -1}, n)
	files, _ := dirFiles(t, dir, foreign)
	if files != maxFiles || st.FilesDeleted != 2*n-maxFiles || st.FilesSkipped != 0 || len(skipped) != 0 || st.FileBytesDeleted == 0 {
		t.Errorf("%d files left, stats %+v", files, st)
	}
}
