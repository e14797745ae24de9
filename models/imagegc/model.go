package imagegc

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Policy is the image GC policy: thresholds in percent, ages.
type Policy struct {
	High, Low      int
	MinAge, MaxAge time.Duration
}

// Record is what the kubelet remembers of one image, keyed by image ID.
type Record struct {
	FirstDetected, LastUsed time.Time
	Size                    int64
	Pinned                  bool
}

// Image is one listed image.
type Image struct {
	ID     string
	Size   int64
	Pinned bool
}

// Round is the input of one round.
type Round struct {
	// Records before the round (not modified).
	Records map[string]Record
	// Images the runtime lists now, and the IDs in use by a container or
	// an image volume.
	Images []Image
	InUse  map[string]bool
	Policy Policy
	// Now is the round's time; BeganGC when the GC loop started.
	Now, BeganGC time.Time
	// CapacityBytes and AvailableBytes of the image filesystem.
	CapacityBytes, AvailableBytes int64
	// FailingRemovals maps an image ID to the error text its RemoveImage returns.
	FailingRemovals map[string]string
	// DeleteUnused: the eviction manager's DeleteUnusedImages instead of GarbageCollect.
	DeleteUnused bool
}

// Removal is one RemoveImage call.
type Removal struct {
	ID     string
	Reason string // "age" or "space"
	Failed bool
}

// Result is the outcome of one round.
type Result struct {
	Removals []Removal
	// Freed is the sum of the sizes removed for space.
	Freed int64
	// Err is the round's error text, "" for none.
	Err string
	// Records after the round.
	Records map[string]Record
}

// Detect is the detection at time at: every listed image keeps its first
// detection or gets at, images in use are last used at, size and pinning
// come from the listing, and unlisted images are forgotten.
func Detect(records map[string]Record, images []Image, inUse map[string]bool, at time.Time) map[string]Record {
	out := map[string]Record{}
	for _, im := range images {
		r, seen := records[im.ID]
		if prev, dup := out[im.ID]; dup {
			r, seen = prev, true // a duplicate listing updates the same record
		}
		if !seen {
			r = Record{FirstDetected: at}
		}
		if inUse[im.ID] {
			r.LastUsed = at
		}
		r.Size, r.Pinned = im.Size, im.Pinned
		out[im.ID] = r
	}
	return out
}

// Collect runs one round.
func Collect(in Round) Result {
	records := Detect(in.Records, in.Images, in.InUse, in.Now)
	res := Result{Records: records}

	// The eviction list: unused, unpinned, oldest use first.
	var order []string
	for id, r := range records {
		if !in.InUse[id] && !r.Pinned {
			order = append(order, id)
		}
	}
	slices.SortFunc(order, func(a, b string) int {
		ra, rb := records[a], records[b]
		return cmp.Or(ra.LastUsed.Compare(rb.LastUsed), ra.FirstDetected.Compare(rb.FirstDetected), strings.Compare(a, b))
	})

	remove := func(id, reason string) bool {
		_, fails := in.FailingRemovals[id]
		res.Removals = append(res.Removals, Removal{ID: id, Reason: reason, Failed: fails})
		if fails {
			return false
		}
		delete(records, id)
		return true
	}
	failures := func(from int) []string {
		var texts []string
		for _, r := range res.Removals[from:] {
			if r.Failed {
				texts = append(texts, in.FailingRemovals[r.ID])
			}
		}
		return texts
	}

	maxAge := in.Policy.MaxAge
	if !in.DeleteUnused && maxAge > 0 && in.Now.Sub(in.BeganGC) > maxAge {
		var kept []string
		for _, id := range order {
			if in.Now.Sub(records[id].LastUsed) <= maxAge || !remove(id, "age") {
				kept = append(kept, id)
			}
		}
		if errs := failures(0); len(errs) > 0 {
			res.Err = fmt.Sprintf("wanted to free images older than %v, encountered errors in image deletion: %s", maxAge, joined(errs))
			return res
		}
		order = kept
	}

	target := int64(math.MaxInt64)
	usage := 0
	if !in.DeleteUnused {
		capacity, available := in.CapacityBytes, min(in.AvailableBytes, in.CapacityBytes)
		if capacity == 0 {
			res.Err = "invalid capacity 0 on image filesystem"
			return res
		}
		usage = 100 - int(available*100/capacity)
		if usage < in.Policy.High {
			return res
		}
		target = capacity*int64(100-in.Policy.Low)/100 - available
	}

	var eligible []string
	for _, id := range order {
		r := records[id]
		if r.LastUsed.Before(in.Now) && in.Now.Sub(r.FirstDetected) >= in.Policy.MinAge {
			eligible = append(eligible, id)
		}
	}
	start := len(res.Removals)
	for _, id := range eligible {
		size := records[id].Size
		if !remove(id, "space") {
			continue
		}
		// Enough is checked only after a removal that worked.
		if res.Freed += size; res.Freed >= target {
			break
		}
	}
	if errs := failures(start); len(errs) > 0 {
		res.Err = fmt.Sprintf("wanted to free %d bytes, but freed %d bytes space with errors in image deletion: %s", target, res.Freed, joined(errs))
		return res
	}
	if !in.DeleteUnused && res.Freed < target {
		res.Err = fmt.Sprintf("Insufficient free disk space on the node's image filesystem (%d%% of %s used). "+
			"Failed to free sufficient space by deleting unused images (freed %d bytes). "+
			"Investigate disk usage, as it could be used by active images, logs, volumes, or other data.",
			usage, humanSize(in.CapacityBytes), res.Freed)
	}
	return res
}

// joined prints error texts as Kubernetes' aggregate error does.
func joined(texts []string) string {
	var unique []string
	for _, t := range texts {
		if !slices.Contains(unique, t) {
			unique = append(unique, t)
		}
	}
	if len(texts) == 1 || len(unique) == 1 {
		return unique[0]
	}
	return "[" + strings.Join(unique, ", ") + "]"
}

// humanSize is the binary-unit size of the message: bytes under 1 KiB,
// else one decimal in KiB, MiB, GiB or TiB (never a larger unit).
func humanSize(b int64) string {
	if b < 1024 {
		return fmt.Sprintf("%d B", b)
	}
	units := []string{"KiB", "MiB", "GiB", "TiB"}
	v, u := float64(b)/1024, 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	return fmt.Sprintf("%.1f %s", v, units[u])
}
