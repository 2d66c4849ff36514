package tsc

import (
	"testing"

	"github.com/goxray/xray/internal/inlinecheck"
)

// TestNowInlinable guards Now's design (see the clock variable): it must
// stay within the inliner's budget.
func TestNowInlinable(t *testing.T) { inlinecheck.Require(t, "Now") }
