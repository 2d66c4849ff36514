// Command table summarises scripts/bench-realmod.sh's results (its
// argument is their directory, bin/realmod): per module, the benchmarks
// measured in the instrumented configurations, the geometric means over
// them of the off/plain, on/plain, gotrace/plain (on with Go's execution
// trace beside it) and plain/plain (the plain binary run again: the noise)
// ratios of median ns/op, the budget in force
// and the functions shed while traced (from the runtime's log lines, n/a
// when it printed none); then the server's median req/s ratios and its
// trace check.
package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

var (
	benchLine = regexp.MustCompile(`^(Benchmark\S+)\s+\d+\s+([0-9.]+) ns/op`)
	budgetRE  = regexp.MustCompile(`(?i)budget[ =:]+([^\s,;)]+)`)
	shedRE    = regexp.MustCompile(`(?i)(\d+) functions? shed|shed[ =:]+(\d+)`)
)

// medians reads a benchmark output file: each benchmark's median ns/op.
func medians(path string) map[string]float64 {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	runs := map[string][]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := benchLine.FindStringSubmatch(sc.Text()); m != nil {
			v, _ := strconv.ParseFloat(m[2], 64)
			runs[m[1]] = append(runs[m[1]], v)
		}
	}
	out := map[string]float64{}
	for k, vs := range runs {
		out[k] = median(vs)
	}
	return out
}

func median(vs []float64) float64 {
	slices.Sort(vs)
	n := len(vs)
	if n%2 == 1 {
		return vs[n/2]
	}
	return (vs[n/2-1] + vs[n/2]) / 2
}

// governor reads what the traced runs' stderr says of the budget and of
// shed functions.
func governor(path string) (budget, shed string) {
	b, _ := os.ReadFile(path)
	budget, shed = "n/a", "n/a"
	if m := budgetRE.FindAllSubmatch(b, -1); m != nil {
		budget = string(m[len(m)-1][1])
	}
	most := -1
	for _, m := range shedRE.FindAllSubmatch(b, -1) {
		s := string(m[1]) + string(m[2])
		if n, err := strconv.Atoi(s); err == nil && n > most {
			most = n
		}
	}
	if most >= 0 {
		shed = strconv.Itoa(most)
	}
	return budget, shed
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: table DIR")
		os.Exit(2)
	}
	if err := summarise(os.Stdout, os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// summarise writes the tables of the results in dir to w.
func summarise(w io.Writer, dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var rows []string // the module table's, printed when there are modules
	var allOff, allOn, allGT, allAA []float64
	for _, e := range ents {
		d := filepath.Join(dir, e.Name())
		plain := medians(filepath.Join(d, "plain.txt"))
		if plain == nil {
			continue
		}
		off, on := medians(filepath.Join(d, "off.txt")), medians(filepath.Join(d, "on.txt"))
		gt := medians(filepath.Join(d, "gotrace.txt"))
		again := medians(filepath.Join(d, "plain2.txt"))
		var skip *regexp.Regexp
		if b, err := os.ReadFile(filepath.Join(d, "skip")); err == nil {
			if s := strings.TrimSpace(string(b)); s != "" && s != "-" {
				skip = regexp.MustCompile(s)
			}
		}
		var ro, rn, rg, ra []float64
		for name, p := range plain {
			o, ok1 := off[name]
			n, ok2 := on[name]
			// Names end in -GOMAXPROCS.
			base := name
			if i := strings.LastIndexByte(name, '-'); i > 0 {
				base = name[:i]
			}
			if !ok1 || !ok2 || p <= 0 || skip != nil && skip.MatchString(base) {
				continue
			}
			ro, rn = append(ro, o/p), append(rn, n/p)
			if g, ok := gt[name]; ok {
				rg = append(rg, g/p)
			}
			if a, ok := again[name]; ok {
				ra = append(ra, a/p)
			}
		}
		allOff, allOn = append(allOff, ro...), append(allOn, rn...)
		allGT, allAA = append(allGT, rg...), append(allAA, ra...)
		budget, shed := governor(filepath.Join(d, "on.err"))
		rows = append(rows, fmt.Sprintf("| %s | %d | %.3f | %.3f | %.3f | %.3f | %s | %s |", e.Name(), len(ro), geomean(ro), geomean(rn), geomean(rg), geomean(ra), budget, shed))
	}
	if len(rows) > 0 {
		fmt.Fprintln(w, "| module | benchmarks | off / plain | on / plain | gotrace / plain | plain / plain (A/A) | budget | functions shed |")
		fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |")
		fmt.Fprintln(w, strings.Join(rows, "\n"))
		fmt.Fprintf(w, "| all | %d | %.3f | %.3f | %.3f | %.3f | | |\n", len(allOff), geomean(allOff), geomean(allOn), geomean(allGT), geomean(allAA))
	}

	srv := filepath.Join(dir, "server")
	if b, err := os.ReadFile(filepath.Join(srv, "server.txt")); err == nil {
		rps := map[string][]float64{}
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			f := strings.Fields(l)
			if len(f) >= 2 {
				if v, err := strconv.ParseFloat(f[1], 64); err == nil {
					rps[f[0]] = append(rps[f[0]], v)
				}
			}
		}
		budget, shed := governor(filepath.Join(srv, "on.err"))
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| server | runs | plain req/s | off / plain | on / plain | gotrace / plain | plain / plain (A/A) | budget | functions shed |")
		fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")
		if len(rps["plain"]) > 0 && len(rps["off"]) > 0 && len(rps["on"]) > 0 {
			p := median(rps["plain"])
			// A configuration without runs (an older result directory)
			// shows NaN rather than a made-up ratio.
			ratio := func(cfg string) float64 {
				if len(rps[cfg]) == 0 {
					return math.NaN()
				}
				return median(rps[cfg]) / p
			}
			fmt.Fprintf(w, "| echo v4 (loopback) | %d | %.0f | %.3f | %.3f | %.3f | %.3f | %s | %s |\n", len(rps["plain"]), p, ratio("off"), ratio("on"), ratio("gotrace"), ratio("plain2"), budget, shed)
		}
	}
	if b, err := os.ReadFile(filepath.Join(srv, "check.txt")); err == nil {
		fmt.Fprintln(w)
		fmt.Fprint(w, string(b))
	}
	return nil
}

func geomean(rs []float64) float64 {
	if len(rs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, r := range rs {
		s += math.Log(r)
	}
	return math.Exp(s / float64(len(rs)))
}
