package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// bench writes a benchmark output with one run of each name at ns/op.
func bench(ns map[string]string) string {
	var b strings.Builder
	for name, v := range ns {
		b.WriteString(name + "-2 \t 1000\t " + v + " ns/op\t 0 B/op\n")
	}
	return b.String()
}

func TestSummariseGoTraceColumn(t *testing.T) {
	dir := t.TempDir()
	m := filepath.Join(dir, "example.com_m")
	write(t, filepath.Join(m, "plain.txt"), bench(map[string]string{"BenchmarkA": "100", "BenchmarkB": "200"}))
	write(t, filepath.Join(m, "off.txt"), bench(map[string]string{"BenchmarkA": "110", "BenchmarkB": "220"}))
	write(t, filepath.Join(m, "on.txt"), bench(map[string]string{"BenchmarkA": "150", "BenchmarkB": "300"}))
	write(t, filepath.Join(m, "gotrace.txt"), bench(map[string]string{"BenchmarkA": "200", "BenchmarkB": "400"}))
	write(t, filepath.Join(m, "plain2.txt"), bench(map[string]string{"BenchmarkA": "100", "BenchmarkB": "200"}))
	write(t, filepath.Join(dir, "server", "server.txt"),
		"plain 1000 x\noff 900 x\non 800 x\ngotrace 500 x\nplain2 1000 x\n")

	var out strings.Builder
	if err := summarise(&out, dir); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"| module | benchmarks | off / plain | on / plain | gotrace / plain | plain / plain (A/A) | budget | functions shed |",
		"| example.com_m | 2 | 1.100 | 1.500 | 2.000 | 1.000 | n/a | n/a |",
		"| all | 2 | 1.100 | 1.500 | 2.000 | 1.000 | | |",
		"| server | runs | plain req/s | off / plain | on / plain | gotrace / plain | plain / plain (A/A) | budget | functions shed |",
		"| echo v4 (loopback) | 1 | 1000 | 0.900 | 0.800 | 0.500 | 1.000 | n/a | n/a |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
}

// A result directory from before the gotrace configuration still
// summarises, with NaN where that configuration has no runs.
func TestSummariseWithoutGoTrace(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "server", "server.txt"), "plain 1000 x\noff 900 x\non 800 x\n")
	var out strings.Builder
	if err := summarise(&out, dir); err != nil {
		t.Fatal(err)
	}
	if want := "| echo v4 (loopback) | 1 | 1000 | 0.900 | 0.800 | NaN | NaN | n/a | n/a |"; !strings.Contains(out.String(), want) {
		t.Errorf("missing %q in\n%s", want, out.String())
	}
}
