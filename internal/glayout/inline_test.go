package glayout

import (
	"testing"

	"github.com/goxray/xray/internal/inlinecheck"
)

// TestGoidInlinable guards the property Goid's design exists for: it must
// stay within the inliner's budget, or every traced call pays an extra call.
func TestGoidInlinable(t *testing.T) { inlinecheck.Require(t, "Goid") }
