package service

import (
	"bytes"
	"testing"

	"github.com/gxbit/gxbit/api"
)

func TestOutputLogRoundTrip(t *testing.T) {
	tests := [][]outputChunk{
		nil,
		{{api.Stream_STREAM_STDOUT, []byte("hello\n")}},
		{{api.Stream_STREAM_STDOUT, []byte("a")}, {api.Stream_STREAM_STDERR, bytes.Repeat([]byte("e"), 300)}, {api.Stream_STREAM_STDOUT, []byte("b\n")}},
	}
	for i, chunks := range tests {
		got, err := decodeOutput(encodeOutput(chunks))
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if len(got) != len(chunks) {
			t.Fatalf("case %d: %d chunks back, want %d", i, len(got), len(chunks))
		}
		for j := range got {
			if got[j].stream != chunks[j].stream || !bytes.Equal(got[j].data, chunks[j].data) {
				t.Errorf("case %d chunk %d: got %v %q, want %v %q", i, j, got[j].stream, got[j].data, chunks[j].stream, chunks[j].data)
			}
		}
	}
}

func TestOutputLogCorrupt(t *testing.T) {
	for _, b := range [][]byte{{9, 1, 'x'}, {1}, {1, 5, 'a'}, {2, 0x80}} {
		if _, err := decodeOutput(b); err == nil {
			t.Errorf("decodeOutput(%q) = nil error, want one", b)
		}
	}
}

func FuzzDecodeOutput(f *testing.F) {
	f.Add(encodeOutput([]outputChunk{{api.Stream_STREAM_STDOUT, []byte("hi")}, {api.Stream_STREAM_STDERR, []byte("x")}}))
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		chunks, err := decodeOutput(b)
		if err != nil {
			return
		}
		if again := encodeOutput(chunks); !bytes.Equal(again, b) {
			// Non-minimal varints decode too; the re-encoding must at
			// least decode to the same chunks.
			back, err := decodeOutput(again)
			if err != nil || len(back) != len(chunks) {
				t.Fatalf("re-encoding %q does not decode back: %v", b, err)
			}
		}
	})
}
