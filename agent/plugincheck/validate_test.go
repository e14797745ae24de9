package plugincheck

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// TestAllocateSpecsRepeats: a container path repeated with the same host
// path is what the kubelet skips (upstream podDevices.
// deviceRunContainerOptions), so it passes, whatever the permissions or
// read-only flag of the repeat; the same container path with another host
// path is a conflict, for devices and for mounts alike.
func TestAllocateSpecsRepeats(t *testing.T) {
	dev := func(container, host, perms string) *v1beta1.DeviceSpec {
		return &v1beta1.DeviceSpec{ContainerPath: container, HostPath: host, Permissions: perms}
	}
	mount := func(container, host string, readOnly bool) *v1beta1.Mount {
		return &v1beta1.Mount{ContainerPath: container, HostPath: host, ReadOnly: readOnly}
	}
	for name, tc := range map[string]struct {
		resp *v1beta1.ContainerAllocateResponse
		want string
	}{
		"device repeated": {&v1beta1.ContainerAllocateResponse{Devices: []*v1beta1.DeviceSpec{
			dev("/dev/a", "/dev/a", "rw"), dev("/dev/b", "/dev/b", "rw"), dev("/dev/a", "/dev/a", "rw")}}, ""},
		"device repeated with other permissions": {&v1beta1.ContainerAllocateResponse{Devices: []*v1beta1.DeviceSpec{
			dev("/dev/a", "/dev/a", "rw"), dev("/dev/a", "/dev/a", "r")}}, ""},
		"device conflict": {&v1beta1.ContainerAllocateResponse{Devices: []*v1beta1.DeviceSpec{
			dev("/dev/a", "/dev/a0", "rw"), dev("/dev/a", "/dev/a1", "rw")}},
			`two devices at container path "/dev/a" with different host paths "/dev/a0" and "/dev/a1"`},
		"mount repeated": {&v1beta1.ContainerAllocateResponse{Mounts: []*v1beta1.Mount{
			mount("/m", "/host/m", true), mount("/m", "/host/m", false)}}, ""},
		"mount conflict": {&v1beta1.ContainerAllocateResponse{Mounts: []*v1beta1.Mount{
			mount("/m", "/host/m", true), mount("/n", "/host/n", true), mount("/m", "/host/other", true)}},
			`two mounts at container path "/m" with different host paths "/host/m" and "/host/other"`},
	} {
		assert.Equal(t, tc.want, allocateSpecsProblem(tc.resp), name)
	}
}

// TestOrderProblem: the responses to several container requests are
// judged by the devices they name, each of one request alone; a response
// naming none says nothing, and one request has no order.
func TestOrderProblem(t *testing.T) {
	request := func(containers ...[]string) *v1beta1.AllocateRequest {
		req := &v1beta1.AllocateRequest{}
		for _, ids := range containers {
			req.ContainerRequests = append(req.ContainerRequests, &v1beta1.ContainerAllocateRequest{DevicesIds: ids})
		}
		return req
	}
	env := func(values ...string) *v1beta1.AllocateResponse {
		resp := &v1beta1.AllocateResponse{}
		for _, v := range values {
			resp.ContainerResponses = append(resp.ContainerResponses, &v1beta1.ContainerAllocateResponse{Envs: map[string]string{"DEVICES": v}})
		}
		return resp
	}
	for name, tc := range map[string]struct {
		req     *v1beta1.AllocateRequest
		resp    *v1beta1.AllocateResponse
		want    string
		applied bool
	}{
		"one request":             {request([]string{"d0"}), env("d1"), "", false},
		"in order":                {request([]string{"d0"}, []string{"d1"}), env("d0", "d1"), "", true},
		"reversed":                {request([]string{"d0"}, []string{"d1"}), env("d1", "d0"), "container response 0 names [d1], devices of another container request, and none of its own [d0]", true},
		"naming nothing":          {request([]string{"d0"}, []string{"d1"}), env("", "x"), "", false},
		"delimited names":         {request([]string{"d1"}, []string{"d10"}), env("GPU=d1", "d10,"), "", true},
		"a device of both":        {request([]string{"d0", "d1"}, []string{"d1"}), env("d0,d1", "d1"), "", true},
		"reversed, one shared":    {request([]string{"d0", "d1"}, []string{"d1"}), env("d1", "d0,d1"), "container response 1 names [d0], devices of another container request, and none of its own [d1]", true},
		"named in device paths":   {request([]string{"d0"}, []string{"d1"}), &v1beta1.AllocateResponse{ContainerResponses: []*v1beta1.ContainerAllocateResponse{{Devices: []*v1beta1.DeviceSpec{{ContainerPath: "/dev/x", HostPath: "/dev/vfio/d1"}}}, {}}}, "container response 0 names [d1], devices of another container request, and none of its own [d0]", true},
		"named in a mount's path": {request([]string{"d0"}, []string{"d1"}), &v1beta1.AllocateResponse{ContainerResponses: []*v1beta1.ContainerAllocateResponse{{}, {Mounts: []*v1beta1.Mount{{ContainerPath: "/run/d1", HostPath: "/run/d1"}}}}}, "", true},
	} {
		got, applied := orderProblem(tc.req, tc.resp)
		assert.Equal(t, tc.want, got, name)
		assert.Equal(t, tc.applied, applied, name)
	}
}
