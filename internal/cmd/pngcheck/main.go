package main

import (
	"flag"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pngcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var lim Limits
	fs.IntVar(&lim.MinColors, "min-colors", 8, "fail with fewer distinct colours")
	fs.Float64Var(&lim.MaxShare, "max-share", 0.99, "fail when one colour covers more than this fraction of the pixels")
	fs.Float64Var(&lim.MinChromatic, "min-chromatic", 0, "fail when fewer than this fraction of the pixels are clearly coloured (0 = no test)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: pngcheck [flags] FILE.png")
		fs.PrintDefaults()
		return 2
	}
	name := fs.Arg(0)
	f, err := os.Open(name)
	if err != nil {
		fmt.Fprintln(stderr, "pngcheck:", err)
		return 1
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		fmt.Fprintf(stderr, "pngcheck: %s: %v\n", name, err)
		return 1
	}
	st := Measure(img)
	if err := st.Check(lim); err != nil {
		fmt.Fprintf(stderr, "pngcheck: %s: %s: looks blank: %v\n", name, st, err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: %s: ok\n", name, st)
	return 0
}

// Stats describe an image's colours, as 8-bit non-premultiplied RGBA.
type Stats struct {
	Bounds    image.Rectangle
	Colors    int    // distinct colours
	Dominant  uint32 // the most frequent colour, 0xRRGGBBAA
	Share     float64
	Chromatic float64 // fraction of pixels whose channels spread by ≥ 48
}

// Measure counts the colours of img. It visits every pixel once.
func Measure(img image.Image) Stats {
	b := img.Bounds()
	st := Stats{Bounds: b}
	counts := map[uint32]int{}
	chromatic := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			// Undo premultiplication so a colour reads the same at any alpha.
			if a != 0 {
				r, g, bl = r*0xffff/a, g*0xffff/a, bl*0xffff/a
			}
			r8, g8, b8, a8 := r>>8, g>>8, bl>>8, a>>8
			counts[r8<<24|g8<<16|b8<<8|a8]++
			if a8 >= 128 && max(r8, g8, b8)-min(r8, g8, b8) >= 48 {
				chromatic++
			}
		}
	}
	st.Colors = len(counts)
	best := 0
	for c, n := range counts {
		// Ties go to the smaller colour so the report is deterministic.
		if n > best || (n == best && c < st.Dominant) {
			best, st.Dominant = n, c
		}
	}
	if px := b.Dx() * b.Dy(); px > 0 {
		st.Share = float64(best) / float64(px)
		st.Chromatic = float64(chromatic) / float64(px)
	}
	return st
}

// Limits say what counts as drawn; see the command's documentation.
type Limits struct {
	MinColors    int
	MaxShare     float64
	MinChromatic float64
}

// Check returns why st looks blank under lim, or nil.
func (st Stats) Check(lim Limits) error {
	switch {
	case st.Bounds.Empty():
		return fmt.Errorf("no pixels")
	case st.Colors < lim.MinColors:
		return fmt.Errorf("%d colours, want at least %d", st.Colors, lim.MinColors)
	case st.Share > lim.MaxShare:
		return fmt.Errorf("#%08x covers %.2f%% of the pixels, want at most %.2f%%", st.Dominant, 100*st.Share, 100*lim.MaxShare)
	case st.Chromatic < lim.MinChromatic:
		return fmt.Errorf("%.2f%% of the pixels are coloured, want at least %.2f%%", 100*st.Chromatic, 100*lim.MinChromatic)
	}
	return nil
}

func (st Stats) String() string {
	return fmt.Sprintf("%dx%d, %d colours, dominant #%08x %.1f%%, coloured %.1f%%",
		st.Bounds.Dx(), st.Bounds.Dy(), st.Colors, st.Dominant, 100*st.Share, 100*st.Chromatic)
}
