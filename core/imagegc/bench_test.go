package imagegc_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/nodeproof/nodeproof/core/imagegc"
	"github.com/stretchr/testify/require"
)

// BenchmarkGarbageCollect10kImages: one kubelet GC round on a node with
// 10^4 images (2,000 in use by containers, 1 in 100 pinned, sizes 1–100
// MiB, first detected over an hour, half used at some point): the detection
// the round starts with, the eviction order, and the space pass stepped to
// the end with every removal succeeding, freeing down from 95 % to the 80 %
// low threshold. Each iteration is a fresh Manager that has seen one earlier
// detection, so the round does the same work every time. rounds/s is the
// figure BENCHMARKS.md records.
func BenchmarkGarbageCollect10kImages(b *testing.B) {
	const n = 10_000
	images := make([]imagegc.Image, n)
	var containers []imagegc.Container
	var total int64
	for i := range images {
		images[i] = imagegc.Image{ID: fmt.Sprintf("sha256:%064x", i), SizeBytes: int64(1+i%100) << 20, Pinned: i%100 == 0}
		total += images[i].SizeBytes
		if i%5 == 0 {
			containers = append(containers, imagegc.Container{PodID: fmt.Sprintf("pod-%d", i), ID: fmt.Sprintf("ctr-%d", i), ImageID: images[i].ID})
		}
	}
	earlier := imagegc.RuntimeView{Images: images}
	for i := 1; i < n; i += 2 { // half the images were used an hour ago
		earlier.Containers = append(earlier.Containers, imagegc.Container{ID: fmt.Sprintf("old-%d", i), ImageID: images[i].ID})
	}
	now := t0.Add(2 * time.Hour)
	view := imagegc.RuntimeView{Images: images, Containers: containers}
	capacity := total * 100 / 95
	rt := &benchRuntime{view: view, fs: imagegc.FsStats{CapacityBytes: capacity, AvailableBytes: capacity - total}}

	rounds, removals := 0, 0
	for b.Loop() {
		m, err := imagegc.NewManager(imagegc.DefaultPolicy(), imagegc.Options{})
		require.NoError(b, err)
		require.NoError(b, m.Detect(t0, earlier))
		out, err := m.RunGarbageCollect(rt, now, t0)
		require.NoError(b, err)
		require.NoError(b, out.Err)
		rounds++
		removals += len(out.Attempts)
	}
	b.ReportMetric(float64(rounds)/b.Elapsed().Seconds(), "rounds/s")
	b.ReportMetric(float64(removals)/float64(rounds), "removals/round")
}

// benchRuntime answers without recording, so the benchmark measures the core.
type benchRuntime struct {
	view imagegc.RuntimeView
	fs   imagegc.FsStats
}

func (r *benchRuntime) View() imagegc.RuntimeView              { return r.view }
func (r *benchRuntime) RemoveImage(string, string) error       { return nil }
func (r *benchRuntime) ImageFsStats() (imagegc.FsStats, error) { return r.fs, nil }
