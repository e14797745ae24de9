package tail

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBufferKeepsTheLastBytes(t *testing.T) {
	b := &Buffer{Limit: 5}
	b.Write([]byte("abc"))
	got, cut := b.Tail()
	assert.Equal(t, "abc", string(got))
	assert.False(t, cut, "nothing dropped yet")

	b.Write([]byte("defg"))
	got, cut = b.Tail()
	assert.Equal(t, "cdefg", string(got))
	assert.True(t, cut, "ab was dropped")
}

// TestBufferConcurrentWriters: stdout and stderr write from goroutines of
// their own; every byte is counted once (run with -race).
func TestBufferConcurrentWriters(t *testing.T) {
	b := &Buffer{Limit: 1 << 10}
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for range 100 {
				b.Write([]byte("x"))
			}
		})
	}
	wg.Wait()
	got, cut := b.Tail()
	assert.Len(t, got, 200)
	assert.False(t, cut)
}
