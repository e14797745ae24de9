package plugincheck

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkDefaultRun times a default run (100 cases, kubelet restart
// included) against the clean test plugin over real sockets, and reports
// the rapid cases (properties checked) per second.
//
//	go test ./agent/plugincheck -run '^$' -bench DefaultRun -benchtime 5x
func BenchmarkDefaultRun(b *testing.B) {
	cases := 0
	for b.Loop() {
		res, err := checkPlugin(cleanPlugin(socketDir(b)), Options{Restart: true})
		require.NoError(b, err)
		require.True(b, res.Passed(), "findings: %+v", res.Findings)
		cases += DefaultChecks
	}
	b.ReportMetric(float64(cases)/b.Elapsed().Seconds(), "cases/s")
}
