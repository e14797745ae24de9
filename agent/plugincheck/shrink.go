package plugincheck

import (
	"context"
	"errors"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// errShrinkBounded is a call shrinkClient refuses: past the shrink bound,
// a call the plugin was not asked before.
var errShrinkBounded = errors.New("plugincheck: past the shrink bound, a call not made before")

// shrinkClient is the plugin as the kubelet-call property calls it. rapid
// shrinks a failing case by running it and smaller ones over and over,
// and where a call hangs, each run waits out the call bound: a hang took
// minutes to shrink. So shrinkClient keeps the plugin's answers (by call
// and request), and once Options.ShrinkTime has passed since the first
// failure, it answers from them alone: a plugin answers the same request
// the same way, as shrinking assumes anyway. A smaller case that needs a
// call not made before is refused and given up (the property skips it,
// which rapid rejects at once). The shrinking then ends within the bound
// and one case's calls, with the smallest failing case found by then.
type shrinkClient struct {
	v1beta1.DevicePluginClient
	bound time.Duration

	mu sync.Mutex
	// deadline is the first failure's time plus bound; zero before it.
	deadline time.Time
	// answers holds the answers of the failing case and of every run
	// since, and of the current run before a failure.
	answers map[string]answer
	// runStart is when the current run began; refused says it was refused
	// a call.
	runStart time.Time
	refused  bool
}

type answer struct {
	resp proto.Message
	err  error
}

func newShrinkClient(plugin v1beta1.DevicePluginClient, bound time.Duration) *shrinkClient {
	return &shrinkClient{DevicePluginClient: plugin, bound: bound, answers: map[string]answer{}}
}

// beginRun is called as each run of the property starts. Before the first
// failure, only the current run's answers are kept: the failing case's.
func (s *shrinkClient) beginRun() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.deadline.IsZero() {
		clear(s.answers)
	}
	s.runStart, s.refused = time.Now(), false
}

// failed notes a failure of the current run; the first starts the clock.
func (s *shrinkClient) failed() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.deadline.IsZero() {
		s.deadline = time.Now().Add(s.bound)
	}
}

// refusedCall says the current run was refused a call.
func (s *shrinkClient) refusedCall() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

// bounded says the bound ended the shrinking: the last run, which writes
// out the shrunk case, began past the deadline.
func (s *shrinkClient) bounded() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.deadline.IsZero() && s.runStart.After(s.deadline)
}

// call answers req from the kept answers past the deadline, else asks the
// plugin (do) and keeps its answer.
func call[Resp proto.Message](s *shrinkClient, method string, req proto.Message, do func() (Resp, error)) (Resp, error) {
	var zero Resp
	body, err := proto.MarshalOptions{Deterministic: true}.Marshal(req)
	if err != nil {
		return zero, err
	}
	key := method + "\x00" + string(body)
	s.mu.Lock()
	kept, ok := s.answers[key]
	past := !s.deadline.IsZero() && time.Now().After(s.deadline)
	if past && !ok {
		s.refused = true
	}
	s.mu.Unlock()
	switch {
	case past && ok:
		if kept.err != nil {
			return zero, kept.err
		}
		return proto.Clone(kept.resp).(Resp), nil
	case past:
		return zero, errShrinkBounded
	}
	resp, err := do()
	err = steady(err)
	s.mu.Lock()
	s.answers[key] = answer{resp: proto.Clone(resp), err: err}
	s.mu.Unlock()
	return resp, err
}

// steady makes a call that ran out of its bound fail the same way each
// time. gRPC reports it as the deadline exceeded or, when the plugin's end
// of the call gave up first, as the stream reset; rapid tells failures
// apart by their messages, so the two would be two failures to it.
func steady(err error) error {
	if status.Code(err) == codes.DeadlineExceeded {
		return status.FromContextError(context.DeadlineExceeded).Err()
	}
	return err
}

func (s *shrinkClient) GetDevicePluginOptions(ctx context.Context, req *v1beta1.Empty, opts ...grpc.CallOption) (*v1beta1.DevicePluginOptions, error) {
	return call(s, "GetDevicePluginOptions", req, func() (*v1beta1.DevicePluginOptions, error) {
		return s.DevicePluginClient.GetDevicePluginOptions(ctx, req, opts...)
	})
}

func (s *shrinkClient) GetPreferredAllocation(ctx context.Context, req *v1beta1.PreferredAllocationRequest, opts ...grpc.CallOption) (*v1beta1.PreferredAllocationResponse, error) {
	return call(s, "GetPreferredAllocation", req, func() (*v1beta1.PreferredAllocationResponse, error) {
		return s.DevicePluginClient.GetPreferredAllocation(ctx, req, opts...)
	})
}

func (s *shrinkClient) Allocate(ctx context.Context, req *v1beta1.AllocateRequest, opts ...grpc.CallOption) (*v1beta1.AllocateResponse, error) {
	return call(s, "Allocate", req, func() (*v1beta1.AllocateResponse, error) {
		return s.DevicePluginClient.Allocate(ctx, req, opts...)
	})
}

func (s *shrinkClient) PreStartContainer(ctx context.Context, req *v1beta1.PreStartContainerRequest, opts ...grpc.CallOption) (*v1beta1.PreStartContainerResponse, error) {
	return call(s, "PreStartContainer", req, func() (*v1beta1.PreStartContainerResponse, error) {
		return s.DevicePluginClient.PreStartContainer(ctx, req, opts...)
	})
}
