package gvinst

import (
	"errors"
	"testing"
)

func TestMemoryMapReadWrite(t *testing.T) {
	m := NewMemory(0)
	if err := m.Map(0x10000, 2*PageSize, PermRead|PermWrite); err != nil {
		t.Fatal(err)
	}
	// A store that crosses the page boundary.
	if err := m.Store(0x10ffe, 8, 0x1122334455667788); err != nil {
		t.Fatal(err)
	}
	v, err := m.Load(0x10ffe, 8)
	if err != nil || v != 0x1122334455667788 {
		t.Fatalf("Load = %#x, %v", v, err)
	}
	if v, _ := m.Load(0x11000, 2); v != 0x5566 {
		t.Errorf("Load high part = %#x", v)
	}
	var f *Fault
	if _, err := m.Load(0x12000, 4); !errors.As(err, &f) || !f.Unmapped || f.Addr != 0x12000 {
		t.Errorf("load past the end: %v", err)
	}
	if err := m.Protect(0x10000, PageSize, PermRead); err != nil {
		t.Fatal(err)
	}
	if err := m.Store(0x10010, 4, 1); !errors.As(err, &f) || f.Unmapped || f.Access != AccessWrite {
		t.Errorf("store to read-only page: %v", err)
	}
	if err := m.Poke(0x10010, []byte{9}); err != nil {
		t.Errorf("Poke ignores permissions: %v", err)
	}
	if s, err := m.ReadString(0x10010, 16); err != nil || s != "\x09" {
		t.Errorf("ReadString = %q, %v", s, err)
	}
	if err := m.Unmap(0x10000, PageSize); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Load(0x10010, 1); err == nil {
		t.Error("load from unmapped page succeeded")
	}
	if m.Mapped() != PageSize {
		t.Errorf("Mapped = %d", m.Mapped())
	}
}

func TestMemoryLimitAndFindFree(t *testing.T) {
	m := NewMemory(4 * PageSize)
	if err := m.Map(0x100000, 4*PageSize, PermRead); err != nil {
		t.Fatal(err)
	}
	if err := m.Map(0x200000, PageSize, PermRead); !errors.Is(err, ErrOutOfMemory) {
		t.Errorf("over the limit: %v", err)
	}
	a, ok := m.FindFree(2*PageSize, 0x100000, 0x104000+2*PageSize)
	if !ok || a != 0x104000 {
		t.Errorf("FindFree = %#x, %v", a, ok)
	}
	if _, ok := m.FindFree(PageSize, 0x100000, 0x104000); ok {
		t.Error("FindFree found space in a full range")
	}
}

func TestMemoryCodeWrite(t *testing.T) {
	m := NewMemory(0)
	var hit []uint64
	m.OnCodeWrite = func(a uint64) { hit = append(hit, a) }
	if err := m.Map(0x400000, PageSize, PermRead|PermWrite|PermExec); err != nil {
		t.Fatal(err)
	}
	_ = m.Store(0x400010, 4, 1) // before MarkCode: no callback
	m.MarkCode(0x400000)
	_ = m.Store(0x400010, 4, 2)
	if len(hit) != 1 || hit[0] != 0x400000 {
		t.Errorf("OnCodeWrite calls = %#x", hit)
	}
}
