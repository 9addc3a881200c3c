package jit

import "testing"

// TestFormsComplete checks that every instruction form has a row in the
// encoder's table.
func TestFormsComplete(t *testing.T) {
	for m := mnInvalid + 1; m < mnCount; m++ {
		if forms[m].op == nil {
			t.Errorf("form %d has no encoding in forms", m)
		}
	}
}
