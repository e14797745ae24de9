package sweep

// ImageGCNotCovered says what of image garbage collection the scenarios do
// not put to the test, for every summary of a sweep to repeat.
const ImageGCNotCovered = "the kubelet's image garbage collection: the kubelet runs a pass as it starts, when every image " +
	"has just been detected, so imageMinimumGCAge (2 minutes by default) keeps them all, and then every 5 minutes, a period " +
	"no configuration field or flag sets; a scenario lasts seconds, so no pass in one removes an image; " +
	"nodeproof's image GC is tested against the same private containerd instead (agent/containerd, nodeproof imagegc)"

// Violation is a scenario that broke a property: its seed, rapid's report
// (the message and the shrunk steps), and the two lines that replay it.
type Violation struct {
	Seed       uint64 `json:"seed"`
	Report     string `json:"report"`
	Replay     string `json:"replay"`
	TestReplay string `json:"test_replay"`
}

// Check is one property's counts over a sweep.
type Check struct {
	ID      string `json:"id"`
	Checked int    `json:"checked"`
	Applied int    `json:"applied"`
}

// Known is what a sweep saw of one known kubelet bug: the breaches it
// explained, counted apart from violations, and the shortest scenario that
// showed it.
type Known struct {
	ID       string `json:"id"`
	Breaches int    `json:"breaches"`
	Shortest string `json:"shortest"`
}

// Summary is a sweep's summary, as nodeproof node --json writes it and
// nodeproof report reads it (report/node.json).
type Summary struct {
	FirstSeed uint64 `json:"first_seed"`
	LastSeed  uint64 `json:"last_seed"`
	MaxSteps  int    `json:"max_steps"`
	// Scenarios counts the scenarios played, shrinking's included; Steps
	// the steps, and Kinds the steps by kind.
	Scenarios  int            `json:"scenarios"`
	Steps      int            `json:"steps"`
	Kinds      map[string]int `json:"kinds"`
	Checks     []Check        `json:"checks"`
	Known      []Known        `json:"known"`
	Violations []Violation    `json:"violations"`
	// Divergences counts the node simulation's divergences from the real
	// node (RK-SIM-PREDICTS) by class: a known limit of the harness, an
	// open gap docs/deviations.md names, or FidelityBug; Diverged lists
	// each diverging step with its divergences and the steps played.
	Divergences map[string]int `json:"divergences"`
	Diverged    []string       `json:"diverged"`
	// The time of a step (action, settling and every observation) and of a
	// kill -9 restart cycle, in seconds, and of the whole sweep.
	StepMedianSeconds    float64 `json:"step_median_seconds"`
	StepP95Seconds       float64 `json:"step_p95_seconds"`
	RestartMedianSeconds float64 `json:"restart_median_seconds"`
	RestartP95Seconds    float64 `json:"restart_p95_seconds"`
	Seconds              float64 `json:"seconds"`
	// NotCovered says what of the node the scenarios do not test.
	NotCovered []string `json:"not_covered"`
	// Passed: no violation, and no divergence of class FidelityBug.
	Passed bool `json:"passed"`
}

// FidelityBug is the class of a divergence of the simulation from the node
// that no known limit or named gap explains.
const FidelityBug = "fidelity bug"

// FidelityBugs counts the divergences no known limit explains.
func (s Summary) FidelityBugs() int { return s.Divergences[FidelityBug] }
