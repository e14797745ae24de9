package imagegc

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Options are the feature gates that change the records. The zero value is
// v1.36's default.
type Options struct {
	// RuntimeClassInImageCriAPI (alpha, off by default): records are keyed
	// by "<id>,<runtime handler>" when the handler is non-empty, containers
	// mark their image in use by the same tuple, and a removal names the
	// handler the image was pulled with.
	RuntimeClassInImageCriAPI bool
}

// Record is what the kubelet remembers of one image (upstream's imageRecord).
type Record struct {
	// Key is the record's key: the image ID, or the "<id>,<handler>" tuple
	// under RuntimeClassInImageCriAPI.
	Key string
	// RuntimeHandler is the handler of the image's spec when the record was
	// created (runtimeHandlerUsedToPullImage).
	RuntimeHandler string
	// FirstDetected is the detection time of the first detection that
	// listed the image since the Manager was created.
	FirstDetected time.Time
	// LastUsed is the last detection that saw a container (or an image
	// volume) use the image; zero if none has since the Manager was created.
	LastUsed  time.Time
	SizeBytes int64
	Pinned    bool
}

// Manager holds the image records of one kubelet run. A kubelet restart is
// a new Manager.
type Manager struct {
	policy  Policy
	options Options
	records map[string]*Record
}

// NewManager validates the policy as NewImageGCManager does and returns a
// Manager with no records.
func NewManager(policy Policy, options Options) (*Manager, error) {
	if err := policy.Validate(); err != nil {
		return nil, err
	}
	return &Manager{policy: policy, options: options, records: map[string]*Record{}}, nil
}

// Policy returns the policy the Manager was created with.
func (m *Manager) Policy() Policy { return m.policy }

// Records returns a copy of the records, sorted by key.
func (m *Manager) Records() []Record {
	out := make([]Record, 0, len(m.records))
	for _, r := range m.records {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// Detect is upstream's detectImages(detectTime) as the background loop runs
// it: listed images without a record get one first detected at detectTime,
// images in use get lastUsed = detectTime (upstream reads the clock again
// after listing; a caller models that gap by passing the later time), sizes
// and pinning are refreshed, and records of images no longer listed are
// dropped. A listing error, or GetContainerStatus's error for any
// container, is returned before any record changes.
func (m *Manager) Detect(detectTime time.Time, view RuntimeView) error {
	if err := view.Validate(); err != nil {
		return err
	}
	_, err := m.detect(detectTime, view)
	return err
}

// detect returns the set of keys in use.
func (m *Manager) detect(detectTime time.Time, view RuntimeView) (map[string]bool, error) {
	if view.ListImagesErr != nil {
		return nil, view.ListImagesErr
	}
	if view.GetPodsErr != nil {
		return nil, view.GetPodsErr
	}
	listed := make(map[string]bool, len(view.Images))
	for _, img := range view.Images {
		listed[img.ID] = true
	}
	inUse := map[string]bool{}
	for _, c := range view.Containers {
		// The ImageVolume gate is locked on in v1.36: every container's
		// status is read, and its failure aborts the whole detection.
		if c.StatusErr != nil {
			return nil, fmt.Errorf("get container status: %w", c.StatusErr)
		}
		for _, id := range c.MountedImageIDs {
			// v1.36 marks the plain ID, even under RuntimeClassInImageCriAPI.
			if listed[id] {
				inUse[id] = true
			}
		}
		inUse[m.key(c.ImageID, c.ImageRuntimeHandler)] = true
	}

	current := make(map[string]bool, len(view.Images))
	for _, img := range view.Images {
		key := m.key(img.ID, img.RuntimeHandler)
		current[key] = true
		r, ok := m.records[key]
		if !ok {
			r = &Record{Key: key, RuntimeHandler: img.RuntimeHandler, FirstDetected: detectTime}
			m.records[key] = r
		}
		if inUse[key] {
			r.LastUsed = detectTime
		}
		r.SizeBytes = img.SizeBytes
		r.Pinned = img.Pinned
	}
	for key := range m.records {
		if !current[key] {
			delete(m.records, key)
		}
	}
	return inUse, nil
}

// key is upstream's record key (getImageTuple under the gate).
func (m *Manager) key(imageID, runtimeHandler string) string {
	if !m.options.RuntimeClassInImageCriAPI || runtimeHandler == "" {
		return imageID
	}
	return imageID + "," + runtimeHandler
}

// candidate is one image of the eviction list (upstream's evictionInfo).
type candidate struct {
	key string
	// id is the ID RemoveImage is called with.
	id     string
	record Record
}

// evictionOrder is upstream's imagesInEvictionOrder after the detection:
// the records not in use and not pinned, lastUsed ascending, then
// firstDetected ascending, then (where upstream's order is arbitrary) key
// ascending. Under RuntimeClassInImageCriAPI a record whose ID part is
// empty gets an InvalidImageID event and is skipped.
func (m *Manager) evictionOrder(inUse map[string]bool) ([]candidate, []Event) {
	var events []Event
	out := make([]candidate, 0, len(m.records))
	for key, r := range m.records {
		if inUse[key] || r.Pinned {
			continue
		}
		id := key
		if m.options.RuntimeClassInImageCriAPI {
			id, _, _ = strings.Cut(key, ",")
			if id == "" {
				events = append(events, Event{Type: EventTypeWarning, Reason: ReasonInvalidImageID,
					Message: fmt.Sprintf("ImageID is not valid, skipping, image: %v", key)})
				continue
			}
		}
		out = append(out, candidate{key: key, id: id, record: *r})
	}
	sort.Slice(out, func(i, j int) bool { return evictsBefore(out[i], out[j]) })
	// Events of skipped records come in key order, not map order.
	sort.Slice(events, func(i, j int) bool { return events[i].Message < events[j].Message })
	return out, events
}

func evictsBefore(a, b candidate) bool {
	if !a.record.LastUsed.Equal(b.record.LastUsed) {
		return a.record.LastUsed.Before(b.record.LastUsed)
	}
	if !a.record.FirstDetected.Equal(b.record.FirstDetected) {
		return a.record.FirstDetected.Before(b.record.FirstDetected)
	}
	return a.key < b.key
}

func itoa(i int) string { return strconv.Itoa(i) }
