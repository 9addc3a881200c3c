package gvinst

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The text form of GVInst. One instruction a line:
//
//	NAME[.mod][.type[.srctype]] operand, operand, …
//
// for example
//
//	GET.s64 v6, s5
//	LI.s64 v29, -8
//	ADD.s64 v29, v6, v29
//	LD.s32 v1, v29(0)
//	CMP.lt.s32 v2, v1, 100
//	CVT.rz.s32.f64 v3, v4
//	BRANCH v2, 0x401020, 0x401035
//
// A VBlock is a header line "vblock 0xSTART..0xEND:" followed by its
// instructions, indented, each run of them preceded by a comment line
// "# 0xADDR: disassembly" naming the x86 instruction they came from. Text
// after "//" on an instruction line is a comment (the printer adds the float
// value of float immediates there). Print(Parse(s)) == s for printed text.

// FormatInst returns the text form of one instruction, without indentation.
func FormatInst(in *Inst) string {
	var sb strings.Builder
	writeInst(&sb, in)
	return sb.String()
}

// String returns the text form of in.
func (in Inst) String() string { return FormatInst(&in) }

func writeInst(sb *strings.Builder, in *Inst) {
	info := in.Op.Info()
	sb.WriteString(info.Name)
	if info.Mod != ModNone {
		sb.WriteByte('.')
		sb.WriteString(modName(modNames(info.Mod), in.Mod))
	}
	if in.Type != TypeNone {
		sb.WriteByte('.')
		sb.WriteString(in.Type.String())
		if info.SrcType != TNone {
			sb.WriteByte('.')
			sb.WriteString(in.SrcType.String())
		}
	}
	si, ti := 0, 0
	comment := ""
	for i, k := range info.Operands {
		if i == 0 {
			sb.WriteByte(' ')
		} else {
			sb.WriteString(", ")
		}
		switch k {
		case OpdDst:
			sb.WriteString(in.Dst.String())
		case OpdSrc:
			sb.WriteString(in.Src[si].String())
			si++
		case OpdSrcImm:
			if in.HasImm {
				sb.WriteString(formatTypedImm(in.Type, in.Imm))
			} else {
				sb.WriteString(in.Src[si].String())
			}
			si++
		case OpdMem:
			fmt.Fprintf(sb, "%s(%d)", in.Src[si], in.Imm)
			si++
		case OpdImm:
			if in.Op == OpLi {
				sb.WriteString(formatTypedImm(in.Type, in.Imm))
				switch in.Type {
				case F32:
					comment = strconv.FormatFloat(float64(math.Float32frombits(uint32(in.Imm))), 'g', -1, 32)
				case F64:
					comment = strconv.FormatFloat(math.Float64frombits(uint64(in.Imm)), 'g', -1, 64)
				}
			} else {
				sb.WriteString(strconv.FormatInt(in.Imm, 10))
			}
		case OpdTarget:
			fmt.Fprintf(sb, "%#x", in.Target[ti])
			ti++
		case OpdSite:
			sb.WriteString(strconv.FormatUint(in.Target[0], 10))
		}
	}
	if comment != "" {
		sb.WriteString(" // ")
		sb.WriteString(comment)
	}
}

// CanonImm returns v as an immediate of type t is stored: sign-extended from
// t's width for signed and bit-string types, zero-extended for unsigned and
// float types.
func CanonImm(t Type, v int64) int64 {
	bits := t.Bits()
	if bits == 0 || bits >= 64 {
		return v
	}
	if t.IsSigned() || (t >= B8 && t <= B64) {
		return v << (64 - bits) >> (64 - bits)
	}
	return int64(uint64(v) & (1<<bits - 1))
}

func formatTypedImm(t Type, v int64) string {
	switch {
	case t.IsFloat() || t == B128:
		return fmt.Sprintf("%#x", uint64(v))
	case t.IsSigned() || (t >= B8 && t <= B64):
		return strconv.FormatInt(v, 10)
	default:
		return strconv.FormatUint(uint64(v), 10)
	}
}

// Print returns the text form of a VBlock.
func Print(b *VBlock) string {
	var sb strings.Builder
	WriteBlock(&sb, b)
	return sb.String()
}

// WriteBlock appends the text form of b to sb.
func WriteBlock(sb *strings.Builder, b *VBlock) {
	fmt.Fprintf(sb, "vblock %#x..%#x:\n", b.Addr, b.End)
	text := make(map[uint64]string, len(b.Guest))
	for _, g := range b.Guest {
		text[g.Addr] = g.Text
	}
	cur, started := uint64(0), false
	for i := range b.Insts {
		in := &b.Insts[i]
		if !started || in.X86 != cur {
			cur, started = in.X86, true
			fmt.Fprintf(sb, "  # %#x: %s\n", cur, text[cur])
		}
		sb.WriteString("  ")
		writeInst(sb, in)
		sb.WriteByte('\n')
	}
}

// SyntaxError is a parse error in GVInst text, with its position.
type SyntaxError struct {
	Line, Col int
	Msg       string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("gvinst:%d:%d: %s", e.Line, e.Col, e.Msg)
}

// Parse parses the text form of one or more VBlocks.
func Parse(src string) ([]*VBlock, error) {
	var blocks []*VBlock
	var cur *VBlock
	x86 := uint64(0)
	for ln, line := range strings.Split(src, "\n") {
		lineNo := ln + 1
		trimmed := strings.TrimSpace(line)
		col := strings.Index(line, trimmed) + 1
		switch {
		case trimmed == "":
			continue
		case strings.HasPrefix(trimmed, "vblock "):
			rng := strings.TrimSuffix(strings.TrimPrefix(trimmed, "vblock "), ":")
			if !strings.HasSuffix(trimmed, ":") {
				return nil, &SyntaxError{lineNo, col + len(trimmed), "expected ':' after the vblock range"}
			}
			lo, hi, ok := strings.Cut(rng, "..")
			start, err1 := strconv.ParseUint(lo, 0, 64)
			end, err2 := strconv.ParseUint(hi, 0, 64)
			if !ok || err1 != nil || err2 != nil {
				return nil, &SyntaxError{lineNo, col + 7, fmt.Sprintf("expected vblock range 0xSTART..0xEND, found %q", rng)}
			}
			cur = &VBlock{Addr: start, End: end}
			blocks = append(blocks, cur)
			x86 = start
		case strings.HasPrefix(trimmed, "#"):
			if cur == nil {
				return nil, &SyntaxError{lineNo, col, "guest instruction comment outside a vblock"}
			}
			body := strings.TrimSpace(trimmed[1:])
			addrText, text, _ := strings.Cut(body, ":")
			a, err := strconv.ParseUint(strings.TrimSpace(addrText), 0, 64)
			if err != nil {
				return nil, &SyntaxError{lineNo, col + 2, fmt.Sprintf("expected a guest address, found %q", addrText)}
			}
			x86 = a
			cur.Guest = append(cur.Guest, GuestInst{Addr: a, Text: strings.TrimPrefix(text, " ")})
		default:
			if cur == nil {
				return nil, &SyntaxError{lineNo, col, "instruction outside a vblock"}
			}
			in, err := parseInst(trimmed, lineNo, col)
			if err != nil {
				return nil, err
			}
			in.X86 = x86
			cur.Insts = append(cur.Insts, in)
		}
	}
	return blocks, nil
}

// ParseInst parses the text form of one instruction.
func ParseInst(s string) (Inst, error) {
	return parseInst(strings.TrimSpace(s), 1, 1)
}

func parseInst(s string, line, col int) (Inst, error) {
	if i := strings.Index(s, "//"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	errAt := func(off int, format string, args ...any) error {
		return &SyntaxError{line, col + off, fmt.Sprintf(format, args...)}
	}
	head, rest, _ := strings.Cut(s, " ")
	parts := strings.Split(head, ".")
	op, ok := ParseOp(parts[0])
	if !ok {
		return Inst{}, errAt(0, "unknown op %q", parts[0])
	}
	info := op.Info()
	in := Inst{Op: op}
	p := 1
	if info.Mod != ModNone {
		if p >= len(parts) {
			return Inst{}, errAt(len(parts[0]), "%s needs a modifier", info.Name)
		}
		v := -1
		for i, n := range modNames(info.Mod) {
			if n == parts[p] {
				v = i
			}
		}
		if v < 0 {
			return Inst{}, errAt(len(parts[0])+1, "unknown modifier %q for %s", parts[p], info.Name)
		}
		in.Mod = uint8(v)
		p++
	}
	if p < len(parts) {
		t, ok := ParseType(parts[p])
		if !ok {
			return Inst{}, errAt(strings.Index(head, parts[p]), "unknown type %q", parts[p])
		}
		in.Type = t
		p++
	}
	if info.SrcType != TNone {
		if p >= len(parts) {
			return Inst{}, errAt(len(head), "%s needs a source type", info.Name)
		}
		t, ok := ParseType(parts[p])
		if !ok {
			return Inst{}, errAt(strings.LastIndex(head, parts[p]), "unknown type %q", parts[p])
		}
		in.SrcType = t
		p++
	}
	if p != len(parts) {
		return Inst{}, errAt(0, "too many suffixes in %q", head)
	}
	var ops []string
	if r := strings.TrimSpace(rest); r != "" {
		for _, o := range strings.Split(r, ",") {
			ops = append(ops, strings.TrimSpace(o))
		}
	}
	if len(ops) != len(info.Operands) {
		return Inst{}, errAt(len(head), "%s takes %d operands, found %d", info.Name, len(info.Operands), len(ops))
	}
	off := len(head) + 1
	si, ti := 0, 0
	for i, k := range info.Operands {
		o := ops[i]
		pos := off + strings.Index(rest, o)
		switch k {
		case OpdDst, OpdSrc:
			r, ok := ParseReg(o)
			if !ok {
				return Inst{}, errAt(pos, "expected a register, found %q", o)
			}
			if k == OpdDst {
				in.Dst = r
			} else {
				in.Src[si] = r
				si++
			}
		case OpdSrcImm:
			if r, ok := ParseReg(o); ok {
				in.Src[si] = r
			} else {
				v, err := parseImm(o)
				if err != nil {
					return Inst{}, errAt(pos, "expected a register or an immediate, found %q", o)
				}
				in.HasImm = true
				in.Imm = CanonImm(in.Type, v)
			}
			si++
		case OpdMem:
			open := strings.IndexByte(o, '(')
			if open < 0 || !strings.HasSuffix(o, ")") {
				return Inst{}, errAt(pos, "expected an address reg(disp), found %q", o)
			}
			r, ok := ParseReg(o[:open])
			if !ok {
				return Inst{}, errAt(pos, "expected a base register, found %q", o[:open])
			}
			d, err := strconv.ParseInt(o[open+1:len(o)-1], 0, 64)
			if err != nil {
				return Inst{}, errAt(pos+open+1, "expected a displacement, found %q", o[open+1:len(o)-1])
			}
			in.Src[si], in.Imm = r, d
			si++
		case OpdImm:
			v, err := parseImm(o)
			if err != nil {
				return Inst{}, errAt(pos, "expected an immediate, found %q", o)
			}
			if op == OpLi {
				v = CanonImm(in.Type, v)
			}
			in.Imm = v
		case OpdTarget:
			a, err := strconv.ParseUint(o, 0, 64)
			if err != nil {
				return Inst{}, errAt(pos, "expected a code address, found %q", o)
			}
			in.Target[ti] = a
			ti++
		case OpdSite:
			a, err := strconv.ParseUint(o, 10, 32)
			if err != nil {
				return Inst{}, errAt(pos, "expected a site number, found %q", o)
			}
			in.Target[0] = a
		}
	}
	return in, nil
}

// parseImm parses a decimal or 0x-hex integer, signed or unsigned 64-bit.
func parseImm(s string) (int64, error) {
	if v, err := strconv.ParseInt(s, 0, 64); err == nil {
		return v, nil
	}
	u, err := strconv.ParseUint(s, 0, 64)
	return int64(u), err
}
