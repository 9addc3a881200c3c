package service

import (
	"encoding/binary"
	"fmt"

	"github.com/gxbit/gxbit/api"
)

// outputChunk is one write of the guest to stdout or stderr.
type outputChunk struct {
	stream api.Stream
	data   []byte
}

// encodeOutput serialises an output log for the store: per chunk, one byte
// for the stream, the length as a uvarint, then the bytes.
func encodeOutput(chunks []outputChunk) []byte {
	n := 0
	for _, c := range chunks {
		n += 1 + binary.MaxVarintLen64 + len(c.data)
	}
	out := make([]byte, 0, n)
	for _, c := range chunks {
		out = append(out, byte(c.stream))
		out = binary.AppendUvarint(out, uint64(len(c.data)))
		out = append(out, c.data...)
	}
	return out
}

// decodeOutput parses what encodeOutput wrote.
func decodeOutput(b []byte) ([]outputChunk, error) {
	var chunks []outputChunk
	for off := 0; off < len(b); {
		stream := api.Stream(b[off])
		if stream != api.Stream_STREAM_STDOUT && stream != api.Stream_STREAM_STDERR {
			return nil, fmt.Errorf("output log at offset %d: bad stream %d", off, b[off])
		}
		n, w := binary.Uvarint(b[off+1:])
		if w <= 0 {
			return nil, fmt.Errorf("output log at offset %d: bad length", off+1)
		}
		start := off + 1 + w
		if n > uint64(len(b)-start) {
			return nil, fmt.Errorf("output log at offset %d: chunk of %d bytes overruns the log", off, n)
		}
		end := start + int(n)
		chunks = append(chunks, outputChunk{stream: stream, data: b[start:end]})
		off = end
	}
	return chunks, nil
}
