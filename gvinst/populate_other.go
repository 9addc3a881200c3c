//go:build !linux

package gvinst

// populate does nothing where the kernel has no MADV_POPULATE_WRITE: the
// pages fault in at their first write.
func populate([]byte) {}
