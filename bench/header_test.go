package bench

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/goxray/xray"
)

// TestMain prints, before any benchmark runs, the clock and the record
// path the rows below measure: "# clock: ...; record path: ..." (make
// bench's header, which bench/table repeats above its table). Started as
// BenchmarkServerGoTrace's load generator, it is that instead.
func TestMain(m *testing.M) {
	if addr := os.Getenv(kvLoadEnv); addr != "" {
		os.Exit(kvLoadChild(addr))
	}
	flag.Parse()
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		fmt.Println(header())
	}
	os.Exit(m.Run())
}

func header() string {
	dir, err := os.MkdirTemp("", "goxray-bench")
	if err != nil {
		return "# clock: unknown (" + err.Error() + ")"
	}
	defer os.RemoveAll(dir)
	if err := xray.Start(xray.Options{Dir: dir, FlushSignal: xray.NoSignal, Logf: func(string, ...any) {}}); err != nil {
		return "# clock: unknown (" + err.Error() + ")"
	}
	st := xray.Stats()
	xray.Stop()
	return fmt.Sprintf("# clock: %s, %d Hz (%s); record path: %s", st.Clock, st.Frequency, st.FrequencySource, st.RecordPath)
}
