package main

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writePNG(t *testing.T, img image.Image) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x.png")
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func fill(w, h int, c color.Color) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, c)
		}
	}
	return img
}

func pngcheck(args ...string) (int, string, string) {
	var o, e bytes.Buffer
	code := run(args, &o, &e)
	return code, o.String(), e.String()
}

func TestBlankImages(t *testing.T) {
	white := fill(200, 100, color.White)
	// A header over an empty page: grey text pixels, many shades, nothing coloured.
	header := fill(200, 100, color.White)
	for x := 0; x < 200; x++ {
		for y := 0; y < 20; y++ {
			header.Set(x, y, color.Gray{uint8(x)})
		}
	}
	// One dot on white: 2 colours.
	dot := fill(200, 100, color.White)
	dot.Set(5, 5, color.RGBA{255, 0, 0, 255})
	// Many colours, but 99.5% of one.
	mostly := fill(200, 100, color.White)
	for x := 0; x < 100; x++ {
		mostly.Set(x, 0, color.RGBA{uint8(x), 200, 30, 255})
	}
	for _, c := range []struct {
		name string
		img  image.Image
		args []string
		msg  string
	}{
		{"white", white, nil, "1 colours, want at least 8"},
		{"dot", dot, nil, "2 colours"},
		{"mostly", mostly, nil, "#ffffffff covers 99.50% of the pixels"},
		{"header", header, []string{"-min-chromatic", "0.02"}, "0.00% of the pixels are coloured"},
	} {
		args := append(c.args, writePNG(t, c.img))
		code, out, errs := pngcheck(args...)
		if code != 1 || out != "" || !strings.Contains(errs, "looks blank: "+c.msg) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want blank: %q", c.name, code, out, errs, c.msg)
		}
	}
	if err := Measure(image.NewRGBA(image.Rect(0, 0, 0, 0))).Check(Limits{}); err == nil || err.Error() != "no pixels" {
		t.Errorf("empty image: %v", err)
	}
	// Without -min-chromatic the grey header passes: the option is what
	// tells a drawing from text on an empty page.
	if code, _, errs := pngcheck(writePNG(t, header)); code != 0 {
		t.Errorf("header without -min-chromatic: exit %d: %s", code, errs)
	}
}

func TestDrawnImage(t *testing.T) {
	// Warm bars on a light background, like a flame graph.
	img := fill(300, 120, color.RGBA{250, 250, 250, 255})
	for row := 0; row < 5; row++ {
		for x := 10; x < 290-row*40; x++ {
			for y := 20 + row*16; y < 35+row*16; y++ {
				img.Set(x, y, color.RGBA{uint8(205 + 10*row), uint8(60 + 30*row + x%40), 40, 255})
			}
		}
	}
	code, out, errs := pngcheck("-min-chromatic", "0.05", writePNG(t, img))
	if code != 0 || errs != "" || !strings.Contains(out, "300x120") || !strings.HasSuffix(out, ": ok\n") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	st := Measure(img)
	if st.Dominant != 0xfafafaff || st.Colors < 40 || st.Chromatic < 0.3 || st.Chromatic > 0.7 {
		t.Errorf("stats %s", st)
	}
}

func TestTranslucent(t *testing.T) {
	// Premultiplied storage must not turn a translucent red grey.
	img := image.NewNRGBA(image.Rect(0, 0, 10, 10))
	for i := range img.Pix {
		if i%4 == 0 {
			img.Pix[i] = 255
		} else if i%4 == 3 {
			img.Pix[i] = 128
		}
	}
	if st := Measure(img); st.Chromatic != 1 || st.Dominant != 0xff000080 {
		t.Errorf("stats %s, dominant %08x", st, st.Dominant)
	}
}

func TestBadInput(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.png")
	os.WriteFile(p, []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`), 0o644)
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{p}, 1, "png: invalid format"},
		{[]string{"/nonexistent.png"}, 1, "no such file"},
		{nil, 2, "usage"},
		{[]string{"-min-colors", "x", p}, 2, "invalid value"},
	} {
		code, _, errs := pngcheck(c.args...)
		if code != c.code || !strings.Contains(errs, c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", c.args, code, errs, c.code, c.msg)
		}
	}
}
