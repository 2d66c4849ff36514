package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/analysis"
	"github.com/goxray/xray/internal/flame"
)

func init() {
	registerView(view{
		name:    "flame",
		summary: "flame graph SVG of a trace (or of folded stacks), widths in time",
		usage: `usage: goxray flame [flags] TRACE|FOLDED|-

Draws a flame graph (an icicle: roots on top) as a static SVG. Given a trace,
every goroutine's calls are merged by root function and widths are
nanoseconds of goroutine time; -lineage nests a goroutine under the call
that spawned it, as a "go NAME" frame whose time is concurrent with, not
part of, its spawner's. Given folded stacks (llvm-xray stack -all-stacks
-stack-format=flame, or flamegraph.pl input), -values, -unit and
-merge-threads say how to read them (what cmd/xrayflame did).`,
		elision: true,
		outHelp: "write the SVG to this file instead of standard output",
		flags:   flameFlags,
	})
}

func flameFlags(fs *flag.FlagSet) func([]string) (func(io.Writer) error, error) {
	pf := addProfileFlags(fs, true)
	title := fs.String("title", "Flame graph", "header line")
	subtitle := fs.String("subtitle", "", "second header line (default: what the widths are)")
	values := fs.String("values", "inclusive", "folded input: inclusive (llvm-xray time) or self (counts, flamegraph.pl)")
	unit := fs.String("unit", "ticks", "folded input: what the values count")
	merge := fs.Bool("merge-threads", false, "folded input: drop llvm-xray's leading thread_N frame")
	width := fs.Int("width", 1200, "image width in pixels")
	minWidth := fs.Float64("min-width", 0.1, "do not draw frames narrower than this many pixels")
	return func(pos []string) (func(io.Writer) error, error) {
		if len(pos) > 1 || *width < 100 {
			return nil, errUsage
		}
		in := "-"
		if len(pos) == 1 {
			in = pos[0]
		}
		var src io.Reader = os.Stdin
		if in != "-" {
			f, err := os.Open(in)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			src = f
		}
		br := bufio.NewReaderSize(src, 1<<16)
		head, _ := br.Peek(fdr.HeaderPrefixSize)
		opts := flame.Options{Title: *title, Subtitle: *subtitle, Width: *width, MinWidth: *minWidth}
		var tree *flame.Tree
		if fdr.LooksLikeHeader(head) {
			if in == "-" {
				return nil, fmt.Errorf("a trace must be named (its TRACE.map is looked up beside it)")
			}
			p, m, err := pf.loadProfile(in)
			if err != nil {
				return nil, err
			}
			tree = analysis.FlameTree(p, m)
			opts.Unit = "ns"
			if p.Header.CycleFrequency == 0 {
				opts.Unit = "ticks"
			}
			if opts.Subtitle == "" {
				opts.Subtitle = fmt.Sprintf("%s: goroutine time in %s, goroutines merged by root function", in, opts.Unit)
				if *pf.lineage {
					opts.Subtitle += "; \"go F\" frames: goroutines nested under their spawning call (concurrent time)"
				}
			}
			if note := p.ShortNote(m); note != "" {
				// What the window lacks goes on the picture, not only
				// on standard error.
				opts.Subtitle += "; " + note
				fmt.Fprintf(os.Stderr, "goxray flame: %s:\n%s", in, p.Notes(m))
			}
		} else {
			v, err := flame.ParseValues(*values)
			if err != nil {
				return nil, err
			}
			tree, err = flame.Parse(br, flame.ParseOptions{Values: v, MergeThreads: *merge})
			if err != nil {
				return nil, fmt.Errorf("%s: %w", in, err)
			}
			opts.Unit = *unit
		}
		return func(w io.Writer) error { return tree.WriteSVG(w, opts) }, nil
	}
}
