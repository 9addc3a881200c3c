package profile

// FinishAnew is Finish analysing every nest anew, using no analysis kept
// from an earlier Finish.
func FinishAnew(c *Collector, run RunInfo) *File { return c.finish(run, false) }

// Reused is how many nests the collector's last Finish did not analyse
// again.
func Reused(c *Collector) int { return c.reused }

// ProbeCalls is how many probe calls the collector's nests have made while
// sampling (nestState.spent, over every nest).
func ProbeCalls(c *Collector) int64 {
	var n int64
	for _, ns := range c.nests {
		n += ns.spent
	}
	return n
}
