package user

import "testing"

func TestU(t *testing.T) { _ = U() }
