//go:build !(linux && amd64)

package pipeline

// DefaultEngine is the engine a Config with no Engine runs on: the
// interpreter on this platform, where the compiling engine is not
// supported (it is on linux/amd64).
const DefaultEngine = EngineInterp
