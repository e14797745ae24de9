package imagegc

import (
	"time"

	"pgregory.net/rapid"

	core "github.com/nodeproof/nodeproof/core/imagegc"
)

// mi is a mebibyte; layer sizes are whole mebibytes.
const mi = int64(1) << 20

// layers are the layers of catalogue's images; "base" and the language
// runtimes are shared, which is what #68203 is about.
var layers = map[string]int64{
	"pause": 1 * mi, "busybox": 4 * mi, "alpine": 8 * mi, "tools": 60 * mi, "base": 80 * mi,
	"python": 120 * mi, "app": 30 * mi, "worker": 50 * mi, "node": 100 * mi, "web": 20 * mi,
	"api": 70 * mi, "jre": 200 * mi, "svc": 40 * mi, "db": 300 * mi, "nginx": 40 * mi, "curl": 5 * mi, "redis": 30 * mi, "ml": 250 * mi, "jobs": 40 * mi,
}

// catalogueImage is an image the runtime can pull.
type catalogueImage struct {
	id     string
	layers []string
}

// pause is the sandbox image, pinned by the runtime and present from the
// start, as containerd does.
const pause = "sha256:pause"

var catalogue = []catalogueImage{
	{"sha256:alpine-tools", []string{"alpine", "tools"}},
	{"sha256:alpine-curl", []string{"alpine", "curl"}},
	{"sha256:busybox", []string{"busybox"}},
	{"sha256:db", []string{"db"}},
	{"sha256:java-svc", []string{"base", "jre", "svc"}},
	{"sha256:nginx", []string{"base", "nginx"}},
	{"sha256:node-api", []string{"base", "node", "api"}},
	{"sha256:node-jobs", []string{"base", "node", "jobs"}},
	{"sha256:node-web", []string{"base", "node", "web"}},
	{pause, []string{"pause"}},
	{"sha256:python-app", []string{"base", "python", "app"}},
	{"sha256:python-ml", []string{"base", "python", "ml"}},
	{"sha256:python-worker", []string{"base", "python", "worker"}},
	{"sha256:redis", []string{"redis"}},
}

func imageLayers(id string) []string {
	for _, img := range catalogue {
		if img.id == id {
			return img.layers
		}
	}
	return nil
}

// reportedSize is what the runtime's ListImages reports: every layer of
// the image, shared or not.
func reportedSize(id string) int64 {
	var size int64
	for _, l := range imageLayers(id) {
		size += layers[l]
	}
	return size
}

// drawPolicy draws a policy the kubelet's configuration accepts: low
// below high, MaxAge off or above MinAge; high 100 with MaxAge 0 (image GC
// off) included.
func drawPolicy(t *rapid.T) core.Policy {
	band := rapid.SampledFrom([][2]int{{85, 80}, {50, 40}, {70, 20}, {90, 85}, {60, 0}, {100, 80}, {100, 90}, {100, 85}}).Draw(t, "thresholds")
	p := core.Policy{HighThresholdPercent: band[0], LowThresholdPercent: band[1]}
	p.MinAge = rapid.SampledFrom([]time.Duration{0, 2 * time.Minute, 5 * time.Minute}).Draw(t, "minAge")
	if rapid.IntRange(0, 2).Draw(t, "maxAgeSet") == 0 {
		p.MaxAge = p.MinAge + rapid.SampledFrom([]time.Duration{5 * time.Minute, 15 * time.Minute, time.Hour, time.Hour}).Draw(t, "maxAgeOverMin")
	}
	return p
}
