package report

import (
	"github.com/spf13/cobra"

	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/reportview"
)

// define adds the flags to cmd, with their defaults and completions.
func (o *Options) define(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&o.Out, "out", "report", "directory `DIR` to write index.html, report.md and report.json into")
	fl.IntVar(&o.Checks, "checks", 300, "`N` generated cases per suite")
	fl.IntVar(&o.Steps, "steps", 100, "`N` actions per case, on average")
	fl.Uint64Var(&o.Seed, "seed", 0, "base seed `N`; 0 picks one and prints it")
	fl.IntVar(&o.Histories, "histories", 3, "`N` linearizability histories to record and check; 0 for none")
	fl.IntVar(&o.SimSeeds, "sim-seeds", reportview.DefaultSimSeeds, "`N` node simulation seeds to run, from the base seed on; 0 for none")
	fl.Float64Var(&o.SimHours, "sim-hours", reportview.DefaultSimHours, "simulated `H`ours per node simulation seed")
	fl.StringVar(&o.SimFile, "sim", "", "`FILE` written by nodeproof sim --json, to include instead of running --sim-seeds (default "+reportview.DefaultSimFile+" if it exists)")
	fl.StringVar(&o.SuitePattern, "suite", "", "`REGEX` selecting suites by name (default all)")
	fl.StringVar(&o.MutantsFile, "mutants", "", "kill matrix `FILE` written by nodeproof mutants --json, to include (default "+reportview.DefaultMutantsFile+" if it exists)")
	fl.StringVar(&o.LinearizabilityFile, "linearizability", "", "`FILE` holding a JSON array of linearizability results, to include instead of recording histories")
	fl.StringVar(&o.ConformanceFile, "conformance", "", "`FILE` holding a JSON array of conformance results, to include (default "+reportview.DefaultConformanceFile+" if it exists)")
	fl.StringVar(&o.Merge, "merge", "", "combine the shard-N.json files nodeproof campaign wrote into `DIR` into one report, running nothing")
	fl.StringVar(&o.FindingsFile, "findings", "", "`FILE` written by nodeproof findings --json, to include (default "+reportview.DefaultFindingsFile+" if it exists)")
	fl.StringVar(&o.NodeFile, "node", "", "`FILE` written by nodeproof node --json (make node-e2e), the real kubelet's sweep, to include (default "+reportview.DefaultNodeFile+" if it exists)")
	fl.StringVar(&o.UpstreamFile, "upstream", "", "`FILE` written by nodeproof upstream --json (make upstream-matrix), the upstream release matrix, to include (default "+reportview.DefaultUpstreamFile+" if it exists)")
	fl.StringVar(&o.PluginCheckFile, "plugin-check", "", "`FILE` holding a JSON array of plugin checker runs against upstream's plugins, to include (default "+reportview.DefaultPluginCheckFile+" if it exists)")

	// --suite takes a regular expression; the suites' names are the ones
	// worth completing.
	_ = cmd.RegisterFlagCompletionFunc("suite", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return properties.SuiteNames(o.suites), cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.MarkFlagDirname("out")
	_ = cmd.MarkFlagDirname("merge")
	for _, name := range []string{"sim", "node", "upstream", "mutants", "linearizability", "conformance", "findings", "plugin-check"} {
		_ = cmd.MarkFlagFilename(name, "json")
	}
}

// runFlags are report's flags about what to run, which a merge does not do.
var runFlags = []string{"checks", "steps", "seed", "suite", "histories", "sim-seeds", "sim-hours", "sim", "linearizability"}
