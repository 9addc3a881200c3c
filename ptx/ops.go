package ptx

// OpInfo describes one PTX opcode: its operand counts and the op-specific
// modifiers it accepts. The parser uses it to reject unknown instructions and
// modifiers; the checker and the simulator's decoder read the same table.
type OpInfo struct {
	Name             string
	MinArgs, MaxArgs int
	// Modes are the op-specific modifiers the opcode accepts (for example
	// the atomic operations of atom, the modes of shfl).
	Modes []string
	// Cmp is true for opcodes that take a comparison operator (setp, set).
	Cmp bool
}

var atomModes = []string{"add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas"}

// opTable lists every opcode the package accepts, by name.
var opTable = map[string]*OpInfo{
	"mov":        {Name: "mov", MinArgs: 2, MaxArgs: 2},
	"ld":         {Name: "ld", MinArgs: 2, MaxArgs: 3},
	"ldu":        {Name: "ldu", MinArgs: 2, MaxArgs: 2},
	"st":         {Name: "st", MinArgs: 2, MaxArgs: 2},
	"cvt":        {Name: "cvt", MinArgs: 2, MaxArgs: 2},
	"cvta":       {Name: "cvta", MinArgs: 2, MaxArgs: 2},
	"add":        {Name: "add", MinArgs: 3, MaxArgs: 3},
	"addc":       {Name: "addc", MinArgs: 3, MaxArgs: 3},
	"sub":        {Name: "sub", MinArgs: 3, MaxArgs: 3},
	"subc":       {Name: "subc", MinArgs: 3, MaxArgs: 3},
	"mul":        {Name: "mul", MinArgs: 3, MaxArgs: 3},
	"mad":        {Name: "mad", MinArgs: 4, MaxArgs: 4},
	"madc":       {Name: "madc", MinArgs: 4, MaxArgs: 4},
	"mul24":      {Name: "mul24", MinArgs: 3, MaxArgs: 3},
	"mad24":      {Name: "mad24", MinArgs: 4, MaxArgs: 4},
	"div":        {Name: "div", MinArgs: 3, MaxArgs: 3},
	"rem":        {Name: "rem", MinArgs: 3, MaxArgs: 3},
	"abs":        {Name: "abs", MinArgs: 2, MaxArgs: 2},
	"neg":        {Name: "neg", MinArgs: 2, MaxArgs: 2},
	"min":        {Name: "min", MinArgs: 3, MaxArgs: 3},
	"max":        {Name: "max", MinArgs: 3, MaxArgs: 3},
	"fma":        {Name: "fma", MinArgs: 4, MaxArgs: 4},
	"rcp":        {Name: "rcp", MinArgs: 2, MaxArgs: 2},
	"sqrt":       {Name: "sqrt", MinArgs: 2, MaxArgs: 2},
	"rsqrt":      {Name: "rsqrt", MinArgs: 2, MaxArgs: 2},
	"ex2":        {Name: "ex2", MinArgs: 2, MaxArgs: 2},
	"lg2":        {Name: "lg2", MinArgs: 2, MaxArgs: 2},
	"sin":        {Name: "sin", MinArgs: 2, MaxArgs: 2},
	"cos":        {Name: "cos", MinArgs: 2, MaxArgs: 2},
	"copysign":   {Name: "copysign", MinArgs: 3, MaxArgs: 3},
	"testp":      {Name: "testp", MinArgs: 2, MaxArgs: 2, Modes: []string{"finite", "infinite", "number", "notanumber", "normal", "subnormal"}},
	"and":        {Name: "and", MinArgs: 3, MaxArgs: 3},
	"or":         {Name: "or", MinArgs: 3, MaxArgs: 3},
	"xor":        {Name: "xor", MinArgs: 3, MaxArgs: 3},
	"not":        {Name: "not", MinArgs: 2, MaxArgs: 2},
	"cnot":       {Name: "cnot", MinArgs: 2, MaxArgs: 2},
	"shl":        {Name: "shl", MinArgs: 3, MaxArgs: 3},
	"shr":        {Name: "shr", MinArgs: 3, MaxArgs: 3},
	"bfe":        {Name: "bfe", MinArgs: 4, MaxArgs: 4},
	"bfi":        {Name: "bfi", MinArgs: 5, MaxArgs: 5},
	"brev":       {Name: "brev", MinArgs: 2, MaxArgs: 2},
	"bfind":      {Name: "bfind", MinArgs: 2, MaxArgs: 2},
	"shf":        {Name: "shf", MinArgs: 4, MaxArgs: 4, Modes: []string{"l", "r"}},
	"sad":        {Name: "sad", MinArgs: 4, MaxArgs: 4},
	"popc":       {Name: "popc", MinArgs: 2, MaxArgs: 2},
	"clz":        {Name: "clz", MinArgs: 2, MaxArgs: 2},
	"prmt":       {Name: "prmt", MinArgs: 4, MaxArgs: 4, Modes: []string{"f4e", "b4e", "rc8", "ecl", "ecr", "rc16"}},
	"setp":       {Name: "setp", MinArgs: 3, MaxArgs: 4, Cmp: true},
	"set":        {Name: "set", MinArgs: 3, MaxArgs: 4, Cmp: true},
	"selp":       {Name: "selp", MinArgs: 4, MaxArgs: 4},
	"slct":       {Name: "slct", MinArgs: 4, MaxArgs: 4},
	"bra":        {Name: "bra", MinArgs: 1, MaxArgs: 1},
	"call":       {Name: "call", MinArgs: 1, MaxArgs: 3},
	"ret":        {Name: "ret", MinArgs: 0, MaxArgs: 0},
	"exit":       {Name: "exit", MinArgs: 0, MaxArgs: 0},
	"trap":       {Name: "trap", MinArgs: 0, MaxArgs: 0},
	"bar":        {Name: "bar", MinArgs: 0, MaxArgs: 2, Modes: []string{"sync", "arrive", "warp"}},
	"barrier":    {Name: "barrier", MinArgs: 0, MaxArgs: 2, Modes: []string{"sync", "arrive"}},
	"membar":     {Name: "membar", MinArgs: 0, MaxArgs: 0},
	"fence":      {Name: "fence", MinArgs: 0, MaxArgs: 0},
	"atom":       {Name: "atom", MinArgs: 3, MaxArgs: 4, Modes: atomModes},
	"red":        {Name: "red", MinArgs: 2, MaxArgs: 2, Modes: atomModes},
	"shfl":       {Name: "shfl", MinArgs: 4, MaxArgs: 5, Modes: []string{"up", "down", "bfly", "idx"}},
	"vote":       {Name: "vote", MinArgs: 2, MaxArgs: 3, Modes: []string{"all", "any", "uni", "ballot"}},
	"activemask": {Name: "activemask", MinArgs: 1, MaxArgs: 1},
	"nanosleep":  {Name: "nanosleep", MinArgs: 1, MaxArgs: 1},
	"prefetch":   {Name: "prefetch", MinArgs: 1, MaxArgs: 1},
}

// LookupOp returns the table entry of opcode name, or nil when PTX has no
// such opcode or this package does not support it.
func LookupOp(name string) *OpInfo { return opTable[name] }

var cmpOps = map[string]bool{
	"eq": true, "ne": true, "lt": true, "le": true, "gt": true, "ge": true,
	"lo": true, "ls": true, "hi": true, "hs": true,
	"equ": true, "neu": true, "ltu": true, "leu": true, "gtu": true, "geu": true,
	"num": true, "nan": true,
}

var roundMods = map[string]bool{
	"rn": true, "rz": true, "rm": true, "rp": true, "rna": true,
	"rni": true, "rzi": true, "rmi": true, "rpi": true,
}

// flagMods are modifiers without op-specific meaning: they are recorded in
// Inst.Flags.
var flagMods = map[string]bool{
	"ftz": true, "sat": true, "approx": true, "full": true, "uni": true, "aligned": true,
	"sync": true, "wide": true, "hi": true, "lo": true, "to": true, "nc": true,
	"volatile": true, "relaxed": true, "acquire": true, "release": true, "acq_rel": true,
	"sc": true, "weak": true, "mmio": true, "cta": true, "gpu": true, "sys": true, "cluster": true,
	"gl": true, "ca": true, "cg": true, "cs": true, "lu": true, "cv": true, "wb": true,
	"wt": true, "cc": true, "noftz": true, "clamp": true, "wrap": true, "shiftamt": true,
	"noinc": true, "red": true, "NaN": true,
}

var spaceMods = map[string]Space{
	"const": SpaceConst, "global": SpaceGlobal, "local": SpaceLocal, "param": SpaceParam,
	"shared": SpaceShared, "shared::cta": SpaceShared, "shared::cluster": SpaceShared,
	"param::entry": SpaceParam, "param::func": SpaceParam,
}

// classify sorts the dotted modifiers of in into its typed fields. It
// returns an error naming the first modifier the opcode does not accept.
func classify(in *Inst, info *OpInfo) error {
	for _, m := range in.Mods {
		switch {
		case contains(info.Modes, m):
			in.Mode = append(in.Mode, m)
		case info.Cmp && cmpOps[m] && in.Cmp == "":
			in.Cmp = m
		case info.Cmp && (m == "and" || m == "or" || m == "xor"):
			in.BoolOp = m
		case roundMods[m]:
			in.Round = m
		case m == "v2" || m == "v4" || m == "v8":
			in.Vec = int(m[1] - '0')
		case flagMods[m]:
			if in.Flags == nil {
				in.Flags = map[string]bool{}
			}
			in.Flags[m] = true
		case len(m) > 4 && (m[:4] == "L1::" || m[:4] == "L2::"):
			// Cache eviction hints do not change results.
		default:
			if t, ok := lookupType(m); ok {
				in.Types = append(in.Types, t)
				continue
			}
			if s, ok := spaceMods[m]; ok {
				in.Space = s
				continue
			}
			return errorf(in.Pos, "unknown modifier .%s on instruction %s", m, in.Op)
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
