package fuzz

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/core/imagegc"
	"github.com/nodeproof/nodeproof/properties"
	_ "github.com/nodeproof/nodeproof/properties/suites"
)

// FuzzImageGCMachine lets the coverage-guided fuzzer choose the image GC
// state machine's actions: the input bytes are rapid's choices, and every
// invariant of the suite is checked after every step.
func FuzzImageGCMachine(f *testing.F) {
	suite, ok := properties.Lookup("imagegc")
	if !ok {
		f.Fatal("the imagegc suite is not registered")
	}
	f.Fuzz(rapid.MakeFuzz(func(t *rapid.T) {
		suite.Property(t, properties.NewTally())
	}))
}

// FuzzImageGCRuntimeAnswers feeds core/imagegc the runtime's answers as
// outside input: image sizes, image-volume mounts and the filesystem's
// stats, each read from the fuzzer's bytes without bounds. The oracle: an
// answer out of bounds is refused with an *imagegc.InputError naming the
// field, and the records stay as they were; an answer in bounds is taken,
// and the pass that follows never removes a pinned image or one in use.
func FuzzImageGCRuntimeAnswers(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		in := answerReader{data: data}
		m, err := imagegc.NewManager(imagegc.Policy{HighThresholdPercent: int(in.next() % 101), MinAge: time.Duration(in.next() % 3), MaxAge: time.Duration(in.next() % 3)}, imagegc.Options{})
		if err != nil {
			return // the low threshold above the high one: refused, as upstream
		}
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		view, wantField := answerView(&in)
		before := m.Records()
		err = m.Detect(start, view)
		var inputErr *imagegc.InputError
		if wantField != "" {
			if !errors.As(err, &inputErr) || inputErr.Field != wantField {
				t.Fatalf("a view with %s out of bounds: got %v, want an InputError naming it", wantField, err)
			}
			if !reflect.DeepEqual(before, m.Records()) {
				t.Fatalf("a refused view changed the records: %+v", m.Records())
			}
			return
		}
		if err != nil {
			t.Fatalf("a view in bounds refused: %v", err)
		}
		pass, err := m.GarbageCollect(start.Add(time.Hour), start, view)
		if err != nil {
			t.Fatalf("GarbageCollect on a view Detect took: %v", err)
		}
		stats := imagegc.FsStats{CapacityBytes: int64(in.next()), AvailableBytes: int64(in.next())}
		statsValid := stats.Validate() == nil
		inUse, pinned := map[string]bool{}, map[string]bool{}
		for _, c := range view.Containers {
			inUse[c.ImageID] = true
			for _, id := range c.MountedImageIDs {
				inUse[id] = true
			}
		}
		// A duplicated listing refreshes the record: the last one decides.
		for _, img := range view.Images {
			pinned[img.ID] = img.Pinned
		}
		for step := pass.Next(); step.Kind != imagegc.StepDone; step = pass.Next() {
			switch step.Kind {
			case imagegc.StepRemoveImage:
				if inUse[step.Removal.ImageID] || pinned[step.Removal.ImageID] {
					t.Fatalf("removes %s, which is in use or pinned", step.Removal.ImageID)
				}
				err = pass.RemoveImageDone(nil)
			case imagegc.StepImageFsStats:
				err = pass.ImageFsStatsDone(stats, nil)
				if err != nil && statsValid || err == nil && !statsValid {
					t.Fatalf("stats %+v (valid: %t): %v", stats, statsValid, err)
				}
				if err != nil {
					if !errors.As(err, &inputErr) {
						t.Fatalf("stats out of bounds refused without an InputError: %v", err)
					}
					return
				}
			}
			if err != nil {
				t.Fatalf("%+v: %v", step, err)
			}
		}
	})
}

// answerReader hands out the fuzzer's bytes eight at a time, zero once
// they run out.
type answerReader struct{ data []byte }

func (r *answerReader) next() uint64 {
	var b [8]byte
	n := copy(b[:], r.data)
	r.data = r.data[n:]
	return binary.LittleEndian.Uint64(b[:])
}

// answerView reads up to 8 images and 4 containers. It returns the first
// field out of bounds, in the order the core checks them, or "".
func answerView(in *answerReader) (imagegc.RuntimeView, string) {
	var v imagegc.RuntimeView
	bad := ""
	for i := range int(in.next() % 9) {
		size := int64(in.next())
		v.Images = append(v.Images, imagegc.Image{ID: fmt.Sprintf("sha256:%d", in.next()%6), SizeBytes: size, Pinned: in.next()%4 == 0})
		if bad == "" && (size < 0 || size > imagegc.MaxImageSizeBytes) {
			bad = fmt.Sprintf("images[%d].sizeBytes", i)
		}
	}
	for i := range int(in.next() % 5) {
		c := imagegc.Container{PodID: "pod", ID: fmt.Sprintf("c%d", i), ImageID: fmt.Sprintf("sha256:%d", in.next()%6)}
		for range int(in.next() % 3) {
			c.MountedImageIDs = append(c.MountedImageIDs, fmt.Sprintf("sha256:%d", in.next()%6))
		}
		v.Containers = append(v.Containers, c)
	}
	return v, bad
}
