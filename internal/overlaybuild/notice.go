package overlaybuild

import (
	"fmt"
	"io"
	"os"
	"time"
)

// slowAfter is how long a silent step may run before goxray says what it
// is doing: long enough that quick, cached builds stay quiet.
var slowAfter = 2 * time.Second

// noticeOut is where such lines go.
var noticeOut io.Writer = os.Stderr

// whenSlow prints msg as one line on noticeOut if stop is not called
// within slowAfter.
func whenSlow(msg string) (stop func()) {
	t := time.AfterFunc(slowAfter, func() { fmt.Fprintln(noticeOut, msg) })
	return func() { t.Stop() }
}

// prepareNotice is said while the build is prepared, before the go
// command's own output starts: listing the packages and compiling their
// dependencies for type information (go list -export) take seconds the
// first time, and nothing else would be printed meanwhile.
const prepareNotice = "goxray: preparing the traced build (listing packages, compiling dependencies for type information); a module's first goxray build takes a while, later ones use the build cache"
