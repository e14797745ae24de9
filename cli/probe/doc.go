// Package probe is `nodeproof probe -f FILE`: the timeline of each pod's
// probes, as the v1.36 kubelet's prober (core/prober/timeline) plays it on
// a virtual clock against scripted outcomes, or live against a host
// (agent/probe.PlayLive); printed as text or JSON.
package probe
