//go:build linux && amd64

package pipeline

// DefaultEngine is the engine a Config with no Engine runs on: the
// compiling engine where it is supported (linux/amd64), the interpreter
// elsewhere. Every phase (run, profile, accelerate, run --accelerate)
// runs on it.
const DefaultEngine = EngineJIT
