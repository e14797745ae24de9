package tail

import "sync"

// Buffer keeps the last Limit bytes written to it. It is safe for
// concurrent use, so one Buffer can take a process's stdout and stderr.
type Buffer struct {
	Limit int

	mu  sync.Mutex
	buf []byte
	cut bool
}

func (b *Buffer) Write(data []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, data...)
	if over := len(b.buf) - b.Limit; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
		b.cut = true
	}
	return len(data), nil
}

// Tail returns a copy of what the buffer kept, and whether earlier output
// was dropped to keep it within Limit.
func (b *Buffer) Tail() ([]byte, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.buf...), b.cut
}
