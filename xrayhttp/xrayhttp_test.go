package xrayhttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"expvar"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goxray/xray"
	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/xraytool"
)

// The tests share the process's one tracer, so none runs in parallel.

func quiet(string, ...any) {}

func start(t *testing.T, o xray.Options) {
	t.Helper()
	o.Dir = t.TempDir()
	o.FlushSignal = xray.NoSignal
	o.Logf = quiet
	if err := xray.Start(o); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { xray.Stop() })
}

// server serves a mux with Register's handlers on a loopback port.
func server(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	Register(mux)
	mux.Handle("/debug/vars", expvar.Handler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// calls runs n nested calls (1 → 2) on each of g goroutines and waits.
func calls(g, n int) {
	var wg sync.WaitGroup
	for range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				xray.Enter(1)
				xray.Enter(2)
				xray.Exit(2)
				xray.Exit(1)
			}
		}()
	}
	wg.Wait()
}

func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	return do(t, http.MethodGet, url)
}

func do(t *testing.T, method, url string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", method, url, err)
	}
	return resp, body
}

var fileNameRE = regexp.MustCompile(`^xray-log\.[A-Za-z0-9._+-]+\.[0-9]{8}T[0-9]{6}Z$`)

// checkDownload checks a trace response's headers and body, saves the body
// under its announced name and runs llvm-xray on it. It returns the count
// of Enter events per function id that the project's reader found.
func checkDownload(t *testing.T, resp *http.Response, body []byte) map[uint32]int {
	t.Helper()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %s: %s", resp.Status, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/octet-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	if cl := resp.Header.Get("Content-Length"); cl != strconv.Itoa(len(body)) {
		t.Errorf("Content-Length %q, body %d bytes", cl, len(body))
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q", cc)
	}
	disp, params, err := mime.ParseMediaType(resp.Header.Get("Content-Disposition"))
	name := params["filename"]
	if err != nil || disp != "attachment" || !fileNameRE.MatchString(name) {
		t.Fatalf("Content-Disposition %q: %v", resp.Header.Get("Content-Disposition"), err)
	}
	if err := fdr.VerifyStrict(body); err != nil {
		t.Fatalf("fdr.Verify: %v", err)
	}
	f, err := fdr.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := f.Events()
	if err != nil {
		t.Fatal(err)
	}
	enters := map[uint32]int{}
	for _, e := range evs {
		if e.Type == fdr.EventEnter {
			enters[e.FuncID]++
		}
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, body, 0o600); err != nil {
		t.Fatal(err)
	}
	tr := xraytool.Check(t, xraytool.Bin(t), path)
	toolEnters := map[uint32]int{}
	for _, r := range tr.Records {
		if r.Kind == "function-enter" {
			toolEnters[r.FuncID]++
		}
	}
	if !reflect.DeepEqual(toolEnters, enters) {
		t.Errorf("llvm-xray enters %v, fdr reader %v", toolEnters, enters)
	}
	return enters
}

func TestTraceDownload(t *testing.T) {
	// Fill mode with room to spare: every call is in the file.
	start(t, xray.Options{Mode: xray.Fill, BufferCount: 256})
	srv := server(t)
	const g, n = 4, 500
	calls(g, n)
	before := xray.Stats()
	resp, body := get(t, srv.URL+TracePath)
	enters := checkDownload(t, resp, body)
	if enters[1] != g*n || enters[2] != g*n {
		t.Errorf("enters %v, want %d of ids 1 and 2", enters, g*n)
	}
	after := xray.Stats()
	if after.Flushes != before.Flushes+1 || after.FlushedBytes != before.FlushedBytes+uint64(len(body)) {
		t.Errorf("flushes %d → %d, flushed bytes %d → %d, body %d", before.Flushes, after.Flushes, before.FlushedBytes, after.FlushedBytes, len(body))
	}
}

func TestTraceNotRunning(t *testing.T) {
	srv := server(t)
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		resp, body := do(t, method, srv.URL+TracePath)
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("%s before Start: %s", method, resp.Status)
		}
		if method == http.MethodGet && string(body) != notRunning+"\n" {
			t.Errorf("body %q", body)
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
			t.Errorf("Content-Type %q", ct)
		}
		if d := resp.Header.Get("Content-Disposition"); d != "" {
			t.Errorf("error response is a download: %q", d)
		}
	}
	start(t, xray.Options{})
	calls(1, 10)
	if err := xray.Stop(); err != nil {
		t.Fatal(err)
	}
	if resp, _ := get(t, srv.URL+TracePath); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("GET after Stop: %s", resp.Status)
	}
}

func TestHeadTakesNoSnapshot(t *testing.T) {
	start(t, xray.Options{})
	srv := server(t)
	calls(1, 10)
	before := xray.Stats().Flushes
	resp, body := do(t, http.MethodHead, srv.URL+TracePath)
	if resp.StatusCode != http.StatusOK || len(body) != 0 {
		t.Fatalf("HEAD: %s, %d bytes", resp.Status, len(body))
	}
	if _, p, err := mime.ParseMediaType(resp.Header.Get("Content-Disposition")); err != nil || !fileNameRE.MatchString(p["filename"]) {
		t.Errorf("Content-Disposition %q", resp.Header.Get("Content-Disposition"))
	}
	if after := xray.Stats().Flushes; after != before {
		t.Errorf("HEAD flushed: %d → %d", before, after)
	}
}

func TestMethodNotAllowed(t *testing.T) {
	start(t, xray.Options{})
	srv := server(t)
	for _, path := range []string{TracePath, StatsPath} {
		for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
			resp, body := do(t, method, srv.URL+path)
			if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
				t.Errorf("%s %s: %s, Allow %q", method, path, resp.Status, resp.Header.Get("Allow"))
			}
			if !strings.Contains(string(body), "not allowed") {
				t.Errorf("%s %s: body %q", method, path, body)
			}
		}
	}
	if st := xray.Stats(); st.Flushes != 0 {
		t.Errorf("a refused request flushed: %d", st.Flushes)
	}
}

// statsKeys are the JSON names the stats document promises.
var statsKeys = []string{
	"buffer_count", "buffer_size", "buffers_held", "buffers_recycled", "bytes", "clock", "drops",
	"file_bytes_deleted", "files_deleted", "flush_discarded_buffers", "flush_errors", "flushed_bytes", "flushes",
	"frequency_hz", "frequency_source", "go_trace", "goroutine_id_source", "last_error",
	"last_flush", "last_flush_ns", "last_flush_path", "overhead_budget_percent", "reconstructed_entries", "record_cost_ns", "record_path", "records",
	"recycled_records", "retired_writers", "rewound_calls", "running", "shed_funcs", "stack_reads_skipped", "started",
	"temp_file_bytes_deleted", "temp_files_deleted", "trimmed_records", "typed_events_dropped", "unmatched_exits",
}

var dropKeys = []string{"args_truncated", "bad_id", "empty_event", "flush", "full", "oversized_event", "total"}

func keys(m map[string]any) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}

func TestStats(t *testing.T) {
	start(t, xray.Options{BufferSize: 8 << 10, BufferCount: 32})
	srv := server(t)
	calls(2, 100)
	xray.Enter(0) // a bad id: dropped and counted
	if _, err := xray.Flush(); err != nil {
		t.Fatal(err)
	}
	want := xray.Stats()

	resp, body := get(t, srv.URL+StatsPath)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%s %q: %s", resp.Status, resp.Header.Get("Content-Type"), body)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	if got := keys(m); !reflect.DeepEqual(got, statsKeys) {
		t.Errorf("keys %v\nwant %v", got, statsKeys)
	}
	if got := keys(m["drops"].(map[string]any)); !reflect.DeepEqual(got, dropKeys) {
		t.Errorf("drop keys %v, want %v", got, dropKeys)
	}
	var s StatsJSON
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		t.Fatal(err)
	}
	if !s.Running || s.Records != want.Records || s.Records != 2*2*2*100 || s.Drops.BadID != 1 || s.Drops.Total != 1 ||
		s.BufferSize != 8<<10 || s.BufferCount != 32 || s.Flushes != 1 || s.LastFlushPath != want.LastFlushPath || s.Frequency == 0 {
		t.Errorf("stats %+v\nxray.Stats %+v", s, want)
	}
	if started, err := time.Parse(time.RFC3339Nano, m["started"].(string)); err != nil || !started.Equal(want.Started) || !s.Started.Equal(want.Started) {
		t.Errorf("started %q (%v), want %v", m["started"], err, want.Started)
	}
	if d, err := time.ParseDuration(m["last_flush"].(string)); err != nil || d != time.Duration(m["last_flush_ns"].(float64)) || d != want.LastFlush || d <= 0 {
		t.Errorf("last_flush %q, last_flush_ns %v, want %v", m["last_flush"], m["last_flush_ns"], want.LastFlush)
	}

	// After Stop the last session's figures stay visible.
	if err := xray.Stop(); err != nil {
		t.Fatal(err)
	}
	_, body = get(t, srv.URL+StatsPath)
	s = StatsJSON{}
	if err := json.Unmarshal(body, &s); err != nil {
		t.Fatal(err)
	}
	if s.Running || s.Records != want.Records {
		t.Errorf("after Stop: %+v", s)
	}
}

// TestStatsJSONComplete fails when xray.Statistics gains a field that
// NewStatsJSON does not carry: every field, set alone, must change the JSON.
func TestStatsJSONComplete(t *testing.T) {
	zero, _ := json.Marshal(NewStatsJSON(xray.Statistics{}))
	var root xray.Statistics
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		for i := range v.NumField() {
			f, sf := v.Field(i), v.Type().Field(i)
			p := path + sf.Name
			if !sf.IsExported() {
				continue
			}
			if f.Kind() == reflect.Struct && f.Type() != reflect.TypeFor[time.Time]() {
				walk(f, p+".")
				continue
			}
			old := reflect.New(f.Type()).Elem()
			old.Set(f)
			switch {
			case f.Type() == reflect.TypeFor[time.Time]():
				f.Set(reflect.ValueOf(time.Unix(1e9, 5)))
			case f.Kind() == reflect.Bool:
				f.SetBool(true)
			case f.CanInt():
				f.SetInt(7)
			case f.CanUint():
				f.SetUint(7)
			case f.Kind() == reflect.String:
				f.SetString("x")
			case f.CanFloat():
				f.SetFloat(2.5)
			case f.Type() == reflect.TypeFor[[]string]():
				f.Set(reflect.ValueOf([]string{"x"}))
			default:
				t.Errorf("%s: kind %v not covered by this test", p, f.Kind())
				continue
			}
			got, _ := json.Marshal(NewStatsJSON(root))
			if bytes.Equal(got, zero) {
				t.Errorf("xray.Statistics.%s does not reach the JSON: add it to StatsJSON", p)
			}
			f.Set(old)
		}
	}
	walk(reflect.ValueOf(&root).Elem(), "")
}

func TestExpvar(t *testing.T) {
	start(t, xray.Options{})
	srv := server(t)
	calls(1, 50)
	v := expvar.Get(ExpvarName)
	if v == nil {
		t.Fatal("expvar variable not published")
	}
	var direct StatsJSON
	if err := json.Unmarshal([]byte(v.String()), &direct); err != nil || !direct.Running || direct.Records != 200 {
		t.Errorf("expvar %q: %v", v.String(), err)
	}
	_, body := get(t, srv.URL+"/debug/vars")
	var vars map[string]json.RawMessage
	if err := json.Unmarshal(body, &vars); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(vars[ExpvarName], &m); err != nil {
		t.Fatalf("/debug/vars %q: %v", vars[ExpvarName], err)
	}
	if got := keys(m); !reflect.DeepEqual(got, statsKeys) {
		t.Errorf("expvar keys %v\nwant %v", got, statsKeys)
	}
}

func TestConcurrentDownloads(t *testing.T) {
	// A small flight recorder, so buffers are recycled under the downloads.
	start(t, xray.Options{BufferSize: 4 << 10, BufferCount: 16})
	srv := server(t)
	stop := make(chan struct{})
	var rec sync.WaitGroup
	for g := range 8 {
		rec.Add(1)
		go func() {
			defer rec.Done()
			id := xray.ID(10 + g)
			for {
				select {
				case <-stop:
					return
				default:
				}
				for range 100 {
					xray.Enter(id)
					xray.Enter(id + 100)
					xray.Exit(id + 100)
					xray.Exit(id)
				}
				// Bursts leave the flushes some CPU: on a small machine
				// eight spinning recorders starve them (and the test).
				time.Sleep(100 * time.Microsecond)
			}
		}()
	}
	stopRecording := sync.OnceFunc(func() {
		close(stop)
		rec.Wait()
	})
	defer stopRecording()

	// Downloads start once the flight recorder is recycling buffers.
	for xray.Stats().BuffersRecycled == 0 {
		time.Sleep(time.Millisecond)
	}

	const downloads = 6
	type result struct {
		resp *http.Response
		body []byte
		err  error
	}
	results := make([]result, downloads)
	var wg sync.WaitGroup
	for i := range downloads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := TracePath
			if i%3 == 2 {
				path = StatsPath
			}
			resp, err := http.Get(srv.URL + path)
			if err != nil {
				results[i].err = err
				return
			}
			defer resp.Body.Close()
			results[i].body, results[i].err = io.ReadAll(resp.Body)
			results[i].resp = resp
		}()
	}
	wg.Wait()
	// The recorders would only compete with llvm-xray for the CPU now.
	stopRecording()
	var traceBytes uint64
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("request %d: %v", i, r.err)
		}
		if i%3 == 2 {
			var s StatsJSON
			if err := json.Unmarshal(r.body, &s); err != nil || !s.Running {
				t.Errorf("stats %d: %v %q", i, err, r.body)
			}
			continue
		}
		checkDownload(t, r.resp, r.body)
		traceBytes += uint64(len(r.body))
	}
	// Each response carried exactly the bytes its snapshot produced (the
	// downloads are the only flushes here).
	if st := xray.Stats(); st.FlushedBytes != traceBytes || st.Flushes != 4 {
		t.Errorf("%d flushes wrote %d bytes; the clients received %d bytes in 4 downloads", st.Flushes, st.FlushedBytes, traceBytes)
	}
}

// snapshotServer serves serveSnapshot with an injected snapshot function.
func snapshotServer(t *testing.T, write func(io.Writer) (int64, error)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serveSnapshot(w, r, write)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestSnapshotFailureBeforeStatus(t *testing.T) {
	partial := bytes.Repeat([]byte{0xAB}, 1000)
	for _, tc := range []struct {
		name string
		err  error
		code int
	}{
		{"disk full", errors.New("write /tmp/x: no space left on device"), http.StatusInternalServerError},
		{"stopped meanwhile", fmt.Errorf("flush: %w", xray.ErrNotRunning), http.StatusServiceUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := snapshotServer(t, func(w io.Writer) (int64, error) {
				n, _ := w.Write(partial) // fails midway: some bytes are already out
				return int64(n), tc.err
			})
			resp, body := get(t, srv.URL)
			if resp.StatusCode != tc.code {
				t.Errorf("status %s, want %d", resp.Status, tc.code)
			}
			if bytes.Contains(body, partial[:8]) || resp.Header.Get("Content-Disposition") != "" {
				t.Errorf("partial snapshot reached the client: %q", body)
			}
			if want := "xray: snapshot failed: " + tc.err.Error() + "\n"; string(body) != want {
				t.Errorf("body %q, want %q", body, want)
			}
		})
	}
}

// failingSpool gives back half of what was written, then an I/O error.
type failingSpool struct{ bytes.Buffer }

func (f *failingSpool) Reader() (io.Reader, error) {
	half := f.Len() / 2
	return io.MultiReader(bytes.NewReader(f.Bytes()[:half]), errorReader{}), nil
}
func (f *failingSpool) Close() error { return nil }

type errorReader struct{}

func (errorReader) Read([]byte) (int, error) { return 0, errors.New("input/output error") }

func TestSpoolReadFailureAbortsConnection(t *testing.T) {
	var logged []string
	var mu sync.Mutex
	oldSpool, oldLog := newSpool, logf
	newSpool = func() spool { return &failingSpool{} }
	logf = func(format string, args ...any) {
		mu.Lock()
		logged = append(logged, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	t.Cleanup(func() { newSpool, logf = oldSpool, oldLog })

	data := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	srv := snapshotServer(t, func(w io.Writer) (int64, error) {
		n, err := w.Write(data)
		return int64(n), err
	})
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.ContentLength != int64(len(data)) {
		t.Fatalf("status %s, Content-Length %d", resp.Status, resp.ContentLength)
	}
	body, err := io.ReadAll(resp.Body)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("reading a body cut short: %v, want io.ErrUnexpectedEOF", err)
	}
	if len(body) >= len(data) {
		t.Errorf("got %d of %d bytes", len(body), len(data))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logged) != 1 || !strings.Contains(logged[0], "input/output error") || !strings.Contains(logged[0], "aborting") {
		t.Errorf("log %q", logged)
	}
}

func TestMemorySpoolWhenNoTempDir(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	sp := newSpool()
	if _, ok := sp.(*memSpool); !ok {
		t.Fatalf("spool %T, want *memSpool", sp)
	}
	sp.Close()
	start(t, xray.Options{})
	srv := server(t)
	calls(2, 20)
	resp, body := get(t, srv.URL+TracePath)
	if enters := checkDownload(t, resp, body); enters[1] != 40 {
		t.Errorf("enters %v", enters)
	}
}

func TestFileSpoolLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	sp := newSpool()
	if _, ok := sp.(fileSpool); !ok {
		t.Fatalf("spool %T, want fileSpool", sp)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("spool file visible: %v", ents)
	}
	sp.Close()
	start(t, xray.Options{})
	srv := server(t)
	calls(1, 20)
	resp, body := get(t, srv.URL+TracePath)
	checkDownload(t, resp, body)
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("files left in TMPDIR: %v", ents)
	}
}

func TestFileName(t *testing.T) {
	now := time.Date(2025, 1, 2, 15, 4, 5, 6, time.FixedZone("X", 3600))
	for _, tc := range []struct{ argv0, want string }{
		{"/usr/bin/myserver", "xray-log.myserver.20250102T140405Z"},
		{"./my prog", "xray-log.my_prog.20250102T140405Z"},
		{`we"ird;name\x`, "xray-log.we_ird_name_x.20250102T140405Z"},
		{"dé.v2+1", "xray-log.d_.v2+1.20250102T140405Z"},
		{"", "xray-log.program.20250102T140405Z"},
		{"/", "xray-log.program.20250102T140405Z"},
	} {
		if got := fileName(tc.argv0, now); got != tc.want || !fileNameRE.MatchString(got) {
			t.Errorf("fileName(%q) = %q, want %q", tc.argv0, got, tc.want)
		}
	}
}

func TestRegisterTwicePanics(t *testing.T) {
	mux := http.NewServeMux()
	Register(mux)
	defer func() {
		if recover() == nil {
			t.Error("second Register on one mux did not panic")
		}
	}()
	Register(mux)
}

func TestNothingOnDefaultServeMux(t *testing.T) {
	for _, p := range []string{TracePath, StatsPath} {
		req := httptest.NewRequest(http.MethodGet, p, nil)
		if _, pattern := http.DefaultServeMux.Handler(req); pattern != "" {
			t.Errorf("%s is registered on http.DefaultServeMux (pattern %q)", p, pattern)
		}
	}
}

// TestDownloadsTakeSnapshotsOneAtATime: each
// snapshot copies the whole arena, so concurrent downloads must not take
// theirs at the same time, whatever the number of clients; every client
// still gets its whole file.
func TestDownloadsTakeSnapshotsOneAtATime(t *testing.T) {
	var inFlight, most, calls int32
	var mu sync.Mutex
	body := bytes.Repeat([]byte("x"), 4096)
	srv := snapshotServer(t, func(w io.Writer) (int64, error) {
		mu.Lock()
		inFlight++
		calls++
		most = max(most, inFlight)
		mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		n, err := w.Write(body)
		mu.Lock()
		inFlight--
		mu.Unlock()
		return int64(n), err
	})
	const clients = 20
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Get(srv.URL)
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			got, err := io.ReadAll(resp.Body)
			if err != nil || resp.StatusCode != 200 || !bytes.Equal(got, body) {
				errs <- fmt.Errorf("status %d, %d bytes, %v", resp.StatusCode, len(got), err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if most != 1 || calls != clients {
		t.Errorf("%d snapshots, at most %d at once; want %d, one at a time", calls, most, clients)
	}
}

// TestMapDownload: /debug/xray/map serves what WriteMapTo writes, and
// llvm-xray prints the registered names of a downloaded trace with it.
func TestMapDownload(t *testing.T) {
	bin := xraytool.Bin(t)
	id := xray.Register("xrayhttp.test.mapped")
	mux := http.NewServeMux()
	Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	if err := xray.Start(xray.Options{FlushSignal: xray.NoSignal, Logf: func(string, ...any) {}, IgnoreEnv: true, NoFinalFile: true}); err != nil {
		t.Fatal(err)
	}
	defer xray.Stop()
	xray.Enter(id)
	xray.Exit(id)
	dir := t.TempDir()
	get := func(path, file string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
		}
		if cd := resp.Header.Get("Content-Disposition"); path == MapPath && !strings.Contains(cd, ".map") {
			t.Errorf("map Content-Disposition %q", cd)
		}
		if err := os.WriteFile(filepath.Join(dir, file), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	get(TracePath, "trace")
	get(MapPath, "trace.map")
	var want bytes.Buffer
	xray.WriteMapTo(&want)
	if got, _ := os.ReadFile(filepath.Join(dir, "trace.map")); !bytes.Equal(got, want.Bytes()) {
		t.Errorf("map download differs from WriteMapTo (%d vs %d bytes)", len(got), want.Len())
	}
	out, err := xraytool.Run(bin, "account", "-instr_map="+filepath.Join(dir, "trace.map"), filepath.Join(dir, "trace"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "xrayhttp.test.mapped") {
		t.Errorf("llvm-xray account with the downloaded map does not name the function:\n%s", out)
	}
}
