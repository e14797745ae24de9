package plugincheck

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/verify"
	"github.com/nodeproof/nodeproof/verify/cite"
)

// TestCatalogue: every check is a property of the device plugin subsystem
// with a rule, a kind that follows its severity and sources a reader can
// follow; a contract check cites the API (api.proto, the documentation),
// never the kubelet's code.
func TestCatalogue(t *testing.T) {
	repo := os.DirFS("../..")
	seen := map[string]bool{}
	for _, c := range Checks() {
		assert.False(t, seen[c.ID], "%s listed twice", c.ID)
		seen[c.ID] = true
		assert.Equal(t, "deviceplugin", c.Subsystem, c.ID)
		assert.NotEmpty(t, c.Statement, c.ID)
		assert.Equal(t, c.Severity == Contract, c.Kind == verify.Contract, "%s: severity %s, kind %s", c.ID, c.Severity, c.Kind)
		require.NotEmpty(t, c.Sources, c.ID)
		for _, s := range c.Sources {
			require.NoError(t, s.Validate(repo), c.ID)
			if c.Kind == verify.Contract {
				assert.Contains(t, []cite.Kind{cite.KindAPI, cite.KindKubernetesDoc}, s.Kind, "%s is a contract check but cites %s", c.ID, s.Text)
			}
		}
	}
	assert.Len(t, seen, 23)
}

// TestReportRowsCarryRuleAndSource: the report's row of a check gives its
// rule and its sources as one line of text.
func TestReportRowsCarryRuleAndSource(t *testing.T) {
	r := NewReport(&Result{Counts: map[string]Count{PrefSize: {Run: 3, Applied: 2}}}, time.Unix(0, 0), "v", "--dir d")
	require.Len(t, r.Checks, len(Checks()))
	for i, c := range Checks() {
		assert.Equal(t, c.Statement, r.Checks[i].Rule, c.ID)
		assert.Equal(t, cite.Join(c.Sources), r.Checks[i].Source, c.ID)
	}
	assert.Equal(t, CheckRow{ID: PrefSize, Rule: "A preferred allocation holds exactly allocation_size IDs.",
		Source:   "PreferredAllocationRequest in staging/src/k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1/api.proto at v1.36.3 (\"calculate a preferred allocation of size 'allocation_size'\")",
		Severity: Contract, Run: 3, Applied: 2, Result: "passed"}, r.Checks[11])
}
