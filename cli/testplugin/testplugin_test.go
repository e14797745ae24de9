package testplugin

import (
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	plugin "github.com/nodeproof/nodeproof/agent/deviceplugin/testplugin"
)

func noEnv(string) string { return "" }

// TestParseLegalKnobs: the flags of the legal behaviours reach the
// plugin's configuration; the failing device is the last healthy one.
func TestParseLegalKnobs(t *testing.T) {
	cfg, err := parse(strings.Fields("--devices 3 --fail-device-after 0 --reregister-endpoint again.sock --ids-per-host-device 2 --fault Allocate=reversed-container-responses"), noEnv, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, &plugin.DeviceFailure{ID: "dev-2", AfterAllocates: 0}, cfg.DeviceFailure)
	assert.Equal(t, "again.sock", cfg.ReregisterEndpoint)
	assert.Equal(t, 2, cfg.IDsPerHostDevice)
	assert.Equal(t, plugin.ReversedContainerResponses, cfg.Faults[plugin.Allocate].Malformed)

	cfg, err = parse(nil, noEnv, io.Discard)
	require.NoError(t, err)
	assert.Nil(t, cfg.DeviceFailure, "no device fails unless asked")
}

// TestParseLegalKnobErrors: a value the knob cannot use is an error naming
// the flag.
func TestParseLegalKnobErrors(t *testing.T) {
	for args, want := range map[string]string{
		"--fail-device-after -1":            "--fail-device-after needs a healthy device",
		"--devices 0 --fail-device-after 2": "--fail-device-after needs a healthy device (--devices at least 1)",
		"--ids-per-host-device -1":          "--ids-per-host-device must not be negative, got -1",
	} {
		_, err := parse(strings.Fields(args), noEnv, io.Discard)
		assert.ErrorContains(t, err, want, args)
	}
}
