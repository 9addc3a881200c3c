package ptx

import (
	"fmt"
	"strings"
)

// The printer writes a Module back as PTX text in one canonical layout:
// directives first, a blank line, module variables, then each function;
// parameters one per line; inside a body, declarations and instructions
// indented by a tab, labels in the first column, a blank line between the
// leading declarations and the first statement that is not one, whole-line
// comments kept where they were. Print(Parse(x)) is x for text in that
// layout (what ptxgen writes), and Parse(Print(m)) equals m but for
// positions.

// Print returns the module as PTX text in the canonical layout.
func Print(m *Module) string {
	var b strings.Builder
	if m.Version != "" {
		fmt.Fprintf(&b, ".version %s\n", m.Version)
	}
	if len(m.Target) > 0 {
		fmt.Fprintf(&b, ".target %s\n", strings.Join(m.Target, ", "))
	}
	fmt.Fprintf(&b, ".address_size %d\n", m.AddressSize)
	for _, v := range m.Vars {
		b.WriteString("\n")
		writeVar(&b, v, "")
	}
	for _, f := range m.Funcs {
		b.WriteString("\n")
		WriteFunc(&b, f)
	}
	return b.String()
}

// WriteFunc writes function or kernel f (its header, and its body when it
// has one) in the canonical layout.
func WriteFunc(b *strings.Builder, f *Func) {
	if f.Linkage != "" {
		fmt.Fprintf(b, ".%s ", f.Linkage)
	}
	if f.Entry {
		b.WriteString(".entry ")
	} else {
		b.WriteString(".func ")
		if len(f.Rets) > 0 {
			writeParams(b, f.Rets)
			b.WriteString(" ")
		}
	}
	b.WriteString(f.Name)
	writeParams(b, f.Params)
	b.WriteString("\n")
	for _, k := range perfOrder {
		if vs, ok := f.Perf[k]; ok {
			fmt.Fprintf(b, ".%s", k)
			for i, v := range vs {
				if i > 0 {
					b.WriteString(",")
				}
				fmt.Fprintf(b, " %d", v)
			}
			b.WriteString("\n")
		}
	}
	if f.Body == nil {
		b.WriteString(";\n")
		return
	}
	writeBlock(b, f.Body, "")
}

// perfOrder is the order the printer writes performance directives in.
var perfOrder = []string{"maxntid", "reqntid", "minnctapersm", "maxnctapersm", "maxnreg", "noreturn", "reqnctapercluster", "explicitcluster", "maxclusterrank"}

func writeParams(b *strings.Builder, ps []*Param) {
	if len(ps) == 0 {
		b.WriteString("()")
		return
	}
	b.WriteString("(\n")
	for i, p := range ps {
		b.WriteString("\t")
		b.WriteString(paramText(p))
		if i < len(ps)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString(")")
}

func paramText(p *Param) string {
	var b strings.Builder
	fmt.Fprintf(&b, ".%s", p.Space)
	if p.Ptr {
		b.WriteString(" .ptr")
	}
	if p.Align > 0 {
		fmt.Fprintf(&b, " .align %d", p.Align)
	}
	fmt.Fprintf(&b, " .%s %s", p.Type, p.Name)
	writeDims(&b, p.Dims)
	return b.String()
}

func writeDims(b *strings.Builder, dims []int) {
	for _, d := range dims {
		if d < 0 {
			b.WriteString("[]")
		} else {
			fmt.Fprintf(b, "[%d]", d)
		}
	}
}

func writeVar(b *strings.Builder, v *Var, indent string) {
	b.WriteString(indent)
	if v.Linkage != "" {
		fmt.Fprintf(b, ".%s ", v.Linkage)
	}
	fmt.Fprintf(b, ".%s", v.Space)
	if v.Align > 0 {
		fmt.Fprintf(b, " .align %d", v.Align)
	}
	if v.Vec > 0 {
		fmt.Fprintf(b, " .v%d", v.Vec)
	}
	fmt.Fprintf(b, " .%s %s", v.Type, v.Name)
	writeDims(b, v.Dims)
	if v.Init != nil {
		b.WriteString(" = ")
		if len(v.Dims) == 0 && len(v.Init) == 1 {
			b.WriteString(v.Init[0].String())
		} else {
			b.WriteString("{")
			for i, o := range v.Init {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(o.String())
			}
			b.WriteString("}")
		}
	}
	b.WriteString(";\n")
}

func isDecl(s Stmt) bool {
	switch s.(type) {
	case *RegDecl, *Var:
		return true
	}
	return false
}

// writeBlock writes "{", the block's statements and "}"; indent is the
// indentation of the braces.
func writeBlock(b *strings.Builder, blk *Block, indent string) {
	b.WriteString(indent + "{\n")
	in := indent + "\t"
	for i, s := range blk.Stmts {
		if i > 0 && isDecl(blk.Stmts[i-1]) && !isDecl(s) {
			b.WriteString("\n")
		}
		WriteStmt(b, s, in)
	}
	b.WriteString(indent + "}\n")
}

// WriteStmt writes one statement of a body, a line (or for a nested
// block, lines) ending in a newline; indent is the indentation of
// instructions, declarations and comments (labels start the line).
func WriteStmt(b *strings.Builder, s Stmt, indent string) {
	switch x := s.(type) {
	case *Inst:
		b.WriteString(indent)
		b.WriteString(FormatInst(x))
		b.WriteString("\n")
	case *Label:
		b.WriteString(x.Name)
		b.WriteString(":\n")
	case *Comment:
		b.WriteString(indent)
		b.WriteString("//")
		b.WriteString(x.Text)
		b.WriteString("\n")
	case *RegDecl:
		b.WriteString(indent)
		b.WriteString(".reg")
		if x.Vec > 0 {
			fmt.Fprintf(b, " .v%d", x.Vec)
		}
		fmt.Fprintf(b, " .%s %s", x.Type, x.Name)
		if x.Count > 0 {
			fmt.Fprintf(b, "<%d>", x.Count)
		}
		b.WriteString(";\n")
	case *Var:
		writeVar(b, x, indent)
	case *Block:
		writeBlock(b, x, indent)
	}
}

// FormatInst returns one instruction as PTX, without indentation or a
// newline: guard, opcode with its modifiers, operands, semicolon.
func FormatInst(in *Inst) string {
	var b strings.Builder
	if in.Guard != "" {
		b.WriteString("@")
		if in.GuardNeg {
			b.WriteString("!")
		}
		b.WriteString(in.Guard)
		b.WriteString(" ")
	}
	b.WriteString(in.String())
	for i, a := range in.Args {
		if i == 0 {
			b.WriteString(" ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(a.String())
	}
	b.WriteString(";")
	return b.String()
}
