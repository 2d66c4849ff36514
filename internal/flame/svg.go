package flame

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Options control the drawing. Zero fields take the defaults noted.
type Options struct {
	Title       string  // header line; default "Flame graph"
	Subtitle    string  // optional second header line
	Unit        string  // what values count, e.g. "ticks" or "calls"; default "samples"
	Width       int     // image width in pixels; default 1200
	FrameHeight int     // pixels per level; default 16
	MinWidth    float64 // frames narrower than this many pixels are not drawn; default 0.1
}

// Layout constants, in pixels. Labels use a monospace font so that their
// width can be computed here without font metrics: DejaVu Sans Mono,
// Liberation Mono, Menlo and Consolas all advance 0.6 em per character.
const (
	pad       = 10.0
	fontSize  = 12.0
	charWidth = 0.6 * fontSize
	textPad   = 3.0
	headerTop = 8.0 // above the title
	lineGap   = 20.0
	fontStack = "DejaVu Sans Mono, Liberation Mono, Menlo, Consolas, monospace"
	headFont  = "DejaVu Sans, Liberation Sans, Helvetica, Arial, sans-serif"
	minHeight = 200.0
)

func (o Options) withDefaults() Options {
	if o.Title == "" {
		o.Title = "Flame graph"
	}
	if o.Unit == "" {
		o.Unit = "samples"
	}
	if o.Width <= 0 {
		o.Width = 1200
	}
	if o.FrameHeight <= 0 {
		o.FrameHeight = 16
	}
	if o.MinWidth <= 0 {
		o.MinWidth = 0.1
	}
	return o
}

// drawn is a frame that passed the MinWidth cut.
type drawn struct {
	node int32
	x, w float64
}

// WriteSVG draws the tree as an SVG document on w (see the package comment
// for the layout). The output depends only on the tree and o.
func (t *Tree) WriteSVG(w io.Writer, o Options) error {
	if err := t.finish(); err != nil {
		return err
	}
	o = o.withDefaults()
	total := t.nodes[0].total
	width := float64(o.Width)
	fh := float64(o.FrameHeight)

	// Lay out first: the height depends on the deepest frame drawn.
	var frames []drawn
	elided := 0
	maxDepth := int32(0)
	if total > 0 {
		scale := (width - 2*pad) / float64(total)
		// Depth-first with an explicit stack: stacks can be very deep.
		type item struct {
			node int32
			left uint64 // value offset of the frame's left edge
		}
		work := []item{{0, 0}}
		for len(work) > 0 {
			it := work[len(work)-1]
			work = work[:len(work)-1]
			n := &t.nodes[it.node]
			// Both edges come from value offsets and are rounded as written
			// (num), so siblings abut exactly, a callee's edge meets its
			// caller's, and rounding never accumulates along a row.
			x0 := round2(pad + float64(it.left)*scale)
			x1 := round2(pad + float64(it.left+n.total)*scale)
			if x1-x0 < o.MinWidth {
				elided += t.subtreeSize(it.node)
				continue
			}
			frames = append(frames, drawn{it.node, x0, x1 - x0})
			maxDepth = max(maxDepth, n.depth)
			// Callees start at the caller's left edge, in name order; the
			// caller's self value is the gap on the right. Push them, then
			// reverse, so the first callee is drawn first.
			base := len(work)
			left := it.left
			for _, c := range n.children {
				work = append(work, item{c, left})
				left += t.nodes[c].total
			}
			slices.Reverse(work[base:])
		}
	}

	headerLines := 2.0
	if o.Subtitle != "" {
		headerLines = 3
	}
	top := headerTop + headerLines*lineGap + 6
	height := top + float64(maxDepth+1)*fh + pad
	if total == 0 {
		height = top + 3*fh + pad
	}
	// Headless Chromium (156) captures only the top of windows shorter
	// than 144 px; a floor keeps small graphs whole in screenshots.
	height = max(height, minHeight)

	bw := bufio.NewWriterSize(w, 1<<16)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	p(`<?xml version="1.0" encoding="UTF-8" standalone="no"?>` + "\n")
	p(`<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="%d" height="%s" viewBox="0 0 %d %s" role="img" aria-label="%s">`+"\n",
		o.Width, num(height), o.Width, num(height), text(o.Title))
	p(`<rect x="0" y="0" width="100%%" height="100%%" fill="#fafafa"/>` + "\n")
	p(`<g font-family="%s" font-size="%s">`+"\n", fontStack, num(fontSize))

	// Header: title, then the total and what was drawn.
	y := headerTop + lineGap
	p(`<text x="%s" y="%s" text-anchor="middle" font-family="%s" font-size="17" font-weight="bold">%s</text>`+"\n",
		num(width/2), num(y), headFont, text(o.Title))
	if o.Subtitle != "" {
		y += lineGap
		p(`<text x="%s" y="%s" text-anchor="middle" font-family="%s" fill="#444">%s</text>`+"\n", num(width/2), num(y), headFont, text(o.Subtitle))
	}
	y += lineGap
	summary := fmt.Sprintf("total %s %s · %s stacks · %s frames · widths: %s values",
		group(total), o.Unit, group(uint64(t.stacks)), group(uint64(len(t.nodes)-1)), t.values)
	if elided > 0 {
		summary += fmt.Sprintf(" · %s frames under %s px not drawn", group(uint64(elided)), num(o.MinWidth))
	}
	p(`<text x="%s" y="%s" text-anchor="middle" font-family="%s" fill="#444">%s</text>`+"\n", num(width/2), num(y), headFont, text(summary))

	if total == 0 {
		p(`<text x="%s" y="%s" text-anchor="middle" font-family="%s" font-size="16" fill="#888">no samples</text>`+"\n",
			num(width/2), num(top+2*fh), headFont)
		p("</g>\n</svg>\n")
		return bw.Flush()
	}

	unit := text(o.Unit)
	for _, d := range frames {
		n := &t.nodes[d.node]
		fy := top + float64(n.depth)*fh
		name := display(n.name)
		pct := 100 * float64(n.total) / float64(total)
		fill := "#c8c8c8" // the synthetic root is neutral
		if d.node != 0 {
			fill = colour(n.name)
		}
		p(`<g><title>%s (%s %s, %s%%)</title>`, text(name), group(n.total), unit, strconv.FormatFloat(pct, 'f', 2, 64))
		p(`<rect x="%s" y="%s" width="%s" height="%s" fill="%s" rx="2"/>`,
			num(d.x), num(fy), num(d.w), num(fh-1), fill)
		if label := fit(name, d.w); label != "" {
			p(`<text x="%s" y="%s">%s</text>`, num(d.x+textPad), num(fy+fh-4.5), text(label))
		}
		p("</g>\n")
	}
	p("</g>\n</svg>\n")
	return bw.Flush()
}

// subtreeSize counts the frames at and below i (for the "not drawn" note).
func (t *Tree) subtreeSize(i int32) int {
	n := 0
	work := []int32{i}
	for len(work) > 0 {
		j := work[len(work)-1]
		work = work[:len(work)-1]
		n++
		work = append(work, t.nodes[j].children...)
	}
	return n
}

// fit returns the label for a frame w pixels wide: the name, or its start
// with an ellipsis, or nothing when fewer than three characters fit.
func fit(name string, w float64) string {
	// The epsilon keeps an exact fit from rounding down a character.
	room := int((w-2*textPad)/charWidth + 1e-9)
	if room < 3 {
		return ""
	}
	if utf8.RuneCountInString(name) <= room {
		return name
	}
	var b strings.Builder
	k := 0
	for _, r := range name {
		if k == room-1 {
			break
		}
		b.WriteRune(r)
		k++
	}
	b.WriteString("…")
	return b.String()
}

// colour picks a warm fill (red through orange to yellow) from a hash of the
// raw name, so a function keeps its colour across graphs and runs.
func colour(name string) string {
	h := fnv.New64a()
	h.Write([]byte(name))
	v := h.Sum64()
	r := 205 + v%51              // 205..255: always mostly red
	g := 50 + (v>>8)%(r-50-15+1) // 50..r-15: red through orange to amber, never green
	b := 20 + (v>>16)%56         // 20..75: little blue keeps it warm
	return fmt.Sprintf("#%02x%02x%02x", r, g, b)
}

// display makes a raw name printable: bytes that are not valid UTF-8, and
// runes that XML 1.0 forbids or that are invisible or reorder text (control
// and format characters), become \xNN per byte. Everything else is kept.
func display(s string) string {
	clean := true
	for _, r := range s {
		if !printable(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || !printable(r) {
			for j := i; j < i+size; j++ {
				fmt.Fprintf(&b, `\x%02x`, s[j])
			}
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// printable reports whether r may appear as itself in a label. RuneError is
// refused too: display cannot tell it from an invalid byte without
// decoding, and a literal U+FFFD is rare enough to show escaped.
func printable(r rune) bool {
	switch {
	case r == utf8.RuneError:
		return false
	case r < 0x20 || r == 0x7f:
		return false
	case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
		return false
	case r >= 0xd800 && r <= 0xdfff, r == 0xfffe, r == 0xffff:
		return false // not XML characters
	}
	return true
}

// text makes s safe as XML character data or attribute value: printable
// (display, which leaves printable strings alone) and escaped.
func text(s string) string { return xmlEscaper.Replace(display(s)) }

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;")

// num formats a coordinate with two decimals, trimming zeros: enough for
// sub-pixel placement, and identical on every platform.
func num(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// group writes v with thousands separators: 1234567 → 1,234,567.
func group(v uint64) string {
	s := strconv.FormatUint(v, 10)
	if len(s) <= 3 {
		return s
	}
	var b strings.Builder
	lead := len(s) % 3
	if lead > 0 {
		b.WriteString(s[:lead])
	}
	for i := lead; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}
