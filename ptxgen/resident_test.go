package ptxgen

import (
	"bytes"
	"testing"

	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/gvinst"
)

// TestResident launches the saxpy kernel three times with resident
// buffers. The second launch finds x on the device unchanged and does not
// copy it, but copies y, whose last element the CPU changed; before the
// third the guest changes x, which is copied again. Results match the CPU
// engine running the loop as often.
func TestResident(t *testing.T) {
	c := cases()[0]
	bs := parseBlocks(t, c.src)
	k, err := Generate(&Nest{Header: c.header, Blocks: map[uint64]*gvinst.VBlock{c.header: bs[c.header]}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := gpusim.New(gpusim.Options{}).NewContext(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	m, err := ctx.LoadModule(k.PTX)
	if err != nil {
		t.Fatal(err)
	}
	fn, _ := m.Function(k.Name)
	refMem, refCPU := newGuest(t, c)
	mem, cpu := newGuest(t, c)
	var res Resident
	defer res.Free(ctx)
	for round := 0; round < 3; round++ {
		if round == 2 {
			for _, mm := range []*gvinst.Memory{refMem, mem} {
				_ = mm.Store(dataBase+8*7, 8, 0x4010000000000000) // x[7] = 4.0
			}
		}
		// CPU: the whole loop, from the same registers each round.
		rc := *refCPU
		runToSyscall(t, gvinst.NewInterpreter(refMem, bs, gvinst.InterpOptions{}), &rc)
		// GPU: all iterations but the last, which the CPU runs.
		in := LaunchInput{Count: c.arrivals - 1}
		for _, l := range k.LiveIns {
			in.Values = append(in.Values, cpu.State[l.Slot])
			step := uint64(0)
			if l.Slot == gvinst.S0 {
				step = 8
			}
			in.Steps = append(in.Steps, step)
		}
		for range k.Sites {
			in.Sites = append(in.Sites, Range{dataBase, dataBase + 300*8})
		}
		for i := range in.Sites {
			if k.Sites[i].Store || k.Sites[i].Index > 5 {
				in.Sites[i] = Range{dataBase + 0x1000, dataBase + 0x1000 + 300*8}
			}
		}
		st, err := Launch(ctx, fn, k, mem, in, &res)
		if err != nil {
			t.Fatal(err)
		}
		last := *cpu
		last.State[gvinst.S0] = (c.arrivals - 1) * 8
		runToSyscall(t, gvinst.NewInterpreter(mem, bs, gvinst.InterpOptions{}), &last)
		switch round {
		case 0:
			if st.BytesReused != 0 || st.BytesIn == 0 {
				t.Errorf("round 0: %+v", st)
			}
		case 1:
			if st.BytesIn != 300*8 || st.BytesReused != 300*8 {
				t.Errorf("round 1: want x reused and y copied: %+v", st)
			}
		case 2:
			if st.BytesIn != 2*300*8 || st.BytesReused != 0 {
				t.Errorf("round 2: want both copied: %+v", st)
			}
		}
		want, got := make([]byte, 0x2000), make([]byte, 0x2000)
		_ = refMem.Read(dataBase, want)
		_ = mem.Read(dataBase, got)
		if !bytes.Equal(want, got) {
			t.Fatalf("round %d: memory differs from the CPU engine's", round)
		}
	}
}
