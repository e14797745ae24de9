// Package timeline plays a pod's probes through core/prober on a
// virtual clock, as `nodeproof probe` shows them: when each worker runs,
// each probe and its answer, each result the caches publish, when the
// kubelet kills and restarts a container for a liveness or startup
// Failure, and when Ready and Started change. It is deterministic: the
// caller answers each probe (a script, Outcomes.Answer and Play; or real
// probes, with the time they took).
//
// # API
//
//	o, err := timeline.ParseOutcomes("liveness=healthy 30s, failing")
//	t, err := timeline.New(pod, timeline.Options{Duration: 5 * time.Minute})
//	err = timeline.Play(t, o)            // or: req, ok, err := t.Next(); ...; t.Done(req, end, outcome)
//	for _, e := range t.Entries() { ... }     // time order
//
// # What nodeproof assumes around the prober
//
// The kubelet starts with the pod (KubeletStart = AddPod), so the
// start-up jitter applies: Options.Jitter is its draw (0: a kubelet that
// was already running; just under 1 delays every first probe by a whole
// period, the worst case). The workers' first doProbe at AddPod sees no
// container yet; the containers run StartDelay later (sidecars with them;
// regular init containers have finished). The status manager sees every
// change at once. After every published result and every container start
// the pod worker syncs: UpdatePodStatus sets Ready and Started (and fires
// the readiness manual trigger). A liveness or startup Failure of the
// running container kills it; it exits at once (KillExitCode), and the
// kubelet starts it again with a new container ID unless its restart
// policy is Never: at once, as SyncPod kills and starts in one pass, unless
// its previous instance exited less than the current back-off before
// (doBackOff; 10 s doubling to 300 s, reset after 600 s quiet), in which
// case it starts when the back-off since the kill is over (upstream retries
// at a later sync, up to a pod worker back-off later). At one instant the
// probes that end come first, then the workers due (in key order), then
// the runtime. A probe answers at once, or after its timeout.
//
// # Outcome scripts
//
// ParseOutcomes documents the language; each probe plays its pattern from
// each container's start, so a restarted container is healthy again.
package timeline
