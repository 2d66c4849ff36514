// Command pngcheck fails when a PNG looks blank, so that a demo which
// renders an image headlessly notices when nothing was drawn.
//
//	pngcheck [-min-colors N] [-max-share F] [-min-chromatic F] FILE.png
//
// An image passes when it has at least -min-colors distinct colours, no
// colour covers more than -max-share of the pixels, and at least
// -min-chromatic of the pixels are clearly coloured (channels spread by at
// least 48 of 255). The last test is off by default; it is what catches a
// screenshot that shows a header over an empty page, which has plenty of
// grey shades — what headless Chromium produced when its window was too
// short for the SVG. For flame graphs, -min-chromatic 0.02 is a safe bar.
// It prints one line describing the image either way.
//
// Exit status: 0 looks drawn, 1 looks blank or cannot be read, 2 bad usage.
package main
