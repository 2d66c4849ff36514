package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/goxray/xray/internal/flame"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("xrayflame", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: xrayflame [flags] [folded-stacks-file]   (default: standard input)")
		fs.PrintDefaults()
	}
	title := fs.String("title", "Flame graph", "header line")
	subtitle := fs.String("subtitle", "", "optional second header line")
	out := fs.String("o", "", "write the SVG to this file instead of standard output")
	values := fs.String("values", "inclusive", "inclusive: a line's value includes its callees (llvm-xray time); self: it does not (llvm-xray -aggregation-type=count, flamegraph.pl)")
	unit := fs.String("unit", "ticks", "what the values count, shown in tooltips and the header")
	width := fs.Int("width", 1200, "image width in pixels")
	minWidth := fs.Float64("min-width", 0.1, "do not draw frames narrower than this many pixels")
	merge := fs.Bool("merge-threads", false, "drop llvm-xray's leading thread_N frame so all threads merge (like llvm-xray -aggregate-threads)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	v, err := flame.ParseValues(*values)
	if err != nil {
		fmt.Fprintln(stderr, "xrayflame:", err)
		return 2
	}
	if fs.NArg() > 1 || *width < 100 {
		fs.Usage()
		return 2
	}

	in, name := stdin, "standard input"
	if fs.NArg() == 1 && fs.Arg(0) != "-" {
		f, err := os.Open(fs.Arg(0))
		if err != nil {
			fmt.Fprintln(stderr, "xrayflame:", err)
			return 1
		}
		defer f.Close()
		in, name = f, fs.Arg(0)
	}
	tree, err := flame.Parse(in, flame.ParseOptions{Values: v, MergeThreads: *merge})
	if err != nil {
		fmt.Fprintf(stderr, "xrayflame: %s: %v\n", name, err)
		return 1
	}
	opts := flame.Options{Title: *title, Subtitle: *subtitle, Unit: *unit, Width: *width, MinWidth: *minWidth}

	if *out == "" {
		bw := bufio.NewWriter(stdout)
		if err := tree.WriteSVG(bw, opts); err != nil {
			fmt.Fprintln(stderr, "xrayflame:", err)
			return 1
		}
		if err := bw.Flush(); err != nil {
			fmt.Fprintln(stderr, "xrayflame:", err)
			return 1
		}
		return 0
	}
	if err := writeFile(*out, func(w io.Writer) error { return tree.WriteSVG(w, opts) }); err != nil {
		fmt.Fprintln(stderr, "xrayflame:", err)
		return 1
	}
	return 0
}

// writeFile writes path through a temporary file in the same directory and
// renames it, so a reader (the screenshot step) never sees half an SVG.
func writeFile(path string, write func(io.Writer) error) error {
	dir, base := ".", path
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			dir, base = path[:i+1], path[i+1:]
			break
		}
	}
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
