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
