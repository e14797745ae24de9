package imagegc_test

import (
	"time"

	"github.com/nodeproof/nodeproof/core/imagegc"
)

// t0 is an arbitrary kubelet start.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fakeRuntime answers a pass from fixed values and records what it was asked.
type fakeRuntime struct {
	view       imagegc.RuntimeView
	fs         imagegc.FsStats
	fsErr      error
	removeErrs map[string]error
	fsReads    int
	removed    []string
}

func (f *fakeRuntime) View() imagegc.RuntimeView { return f.view }

func (f *fakeRuntime) RemoveImage(id, _ string) error {
	if err := f.removeErrs[id]; err != nil {
		return err
	}
	f.removed = append(f.removed, id)
	return nil
}

func (f *fakeRuntime) ImageFsStats() (imagegc.FsStats, error) {
	f.fsReads++
	return f.fs, f.fsErr
}

func img(id string, size int64) imagegc.Image { return imagegc.Image{ID: id, SizeBytes: size} }

func pinned(id string, size int64) imagegc.Image {
	return imagegc.Image{ID: id, SizeBytes: size, Pinned: true}
}

func ctr(id, imageID string) imagegc.Container {
	return imagegc.Container{PodID: "pod-" + id, ID: id, ImageID: imageID}
}

func attemptIDs(out imagegc.Outcome) []string {
	ids := []string{}
	for _, a := range out.Attempts {
		ids = append(ids, a.ImageID)
	}
	return ids
}

func recordKeys(m *imagegc.Manager) []string {
	keys := []string{}
	for _, r := range m.Records() {
		keys = append(keys, r.Key)
	}
	return keys
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
