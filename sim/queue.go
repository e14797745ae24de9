package sim

import (
	"container/heap"
	"time"
)

// eventKind names what a queued event does; the names are what the trace
// and Stats.ByKind show.
type eventKind string

const (
	evPodArrive      eventKind = "pod-arrive"
	evAdmit          eventKind = "admit"
	evAllocateAnswer eventKind = "allocate-answer"
	evPullDone       eventKind = "pull-done"
	evPodDelete      eventKind = "pod-delete"
	evPodTerminated  eventKind = "pod-terminated"
	evKillRetry      eventKind = "kill-retry"
	evPluginRegister eventKind = "plugin-register"
	evPluginTick     eventKind = "plugin-tick"
	evGC             eventKind = "gc"
	evGCStep         eventKind = "gc-step"
	evProbe          eventKind = "probe"
	evRestart        eventKind = "kubelet-restart"
)

// queued is one future event. kubelet is the kubelet generation the event
// belongs to, for work a kubelet restart drops (an RPC answer, a GC pass);
// 0 for the world's own events, which survive restarts.
type queued struct {
	at      time.Time
	seq     uint64
	kind    eventKind
	kubelet int
	podUID  string
	name    string // a plugin's resource or an image
	// answers are an allocate-answer's payload.
	answers *pluginAnswers
}

// eventQueue orders events by time, then by the order they were queued,
// so ties never depend on the heap's internals.
type eventQueue []*queued

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(*queued)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

func (s *Sim) schedule(e *queued) {
	s.queueSeq++
	e.seq = s.queueSeq
	heap.Push(&s.queue, e)
}
