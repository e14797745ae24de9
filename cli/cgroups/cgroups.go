package cgroups

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodeproof/nodeproof/agent/kube"
	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/nodeproof/nodeproof/core/pod"
)

// Options are the flags of `nodeproof cgroups`, as typed, and what
// Validate reads them as.
type Options struct {
	// File is the node file; "-" is stdin.
	File string
	// CPU and Memory are the node's capacity as quantities; a flag not
	// given leaves the Node manifest or the host to say.
	CPU, Memory string
	// QOSReserved is the kubelet's --qos-reserved, memory=P%.
	QOSReserved string
	// Version ("1" or "2") is the cgroup version whose files to print,
	// Driver the kubelet's cgroup driver.
	Version, Driver string
	// JSON prints the cgroups as a JSON array instead of the tree.
	JSON bool

	// cpuGiven and memoryGiven say whether --node-cpu and --node-memory
	// were given (Complete).
	cpuGiven, memoryGiven bool
	// nodeCPU (millicores), nodeMemory (bytes), qosReserved (a memory
	// percentage), version and driver are the flags read (Validate);
	// nodeCPU, nodeMemory and qosReserved are nil without their flag.
	nodeCPU, nodeMemory *int64
	qosReserved         *int64
	version             cgroups.Version
	driver              cgroups.Driver
}

// NewCommand is `nodeproof cgroups`.
func NewCommand() *cobra.Command {
	o := Options{}
	cmd := &cobra.Command{
		Use:   "cgroups -f FILE [--node-cpu QUANTITY] [--node-memory QUANTITY] [--qos-reserved memory=P%] [--cgroup-version 1|2] [--driver cgroupfs|systemd] [--json]",
		Short: "print the pod and QoS cgroups, with every file value, the kubelet keeps for Pod manifests",
		Long: `Reads a node file (docs/node-file.md, the reading nodeproof admit shares: YAML or
JSON, several documents or a v1 List; an optional Node and the pods bound to it),
plays the kubelet's admission of the arriving pods as nodeproof admit does, and builds
the pod and QoS cgroups a v1.36 kubelet keeps for the pods the node then runs
(core/cgroups: kubepods, the burstable and besteffort tiers, one cgroup per pod and per
running container). It prints each cgroup, parents first, with every file the kubelet
or the container runtime writes and its value, in write order. Paths are relative to
the cgroup root. A container's cgroup is named after its runtime ID
(status.containerStatuses[].containerID) where the manifest has one, else
after the container, which the output says.

The node's capacity comes from --node-cpu and --node-memory; for a flag not given, from
the Node's status.capacity (with its hugepages sizes and pods), and then the Node's
status.allocatable is what the kubelet reported: capacity less allocatable becomes
kube-reserved. Without a Node, from this host, as the kubelet reads its machine (the
CPUs this process may use, MemTotal of /proc/meminfo). Everything else is the v1.36
kubelet's default: no system or kube reservation, the default hard eviction thresholds,
CFS quota on with a 100ms period, pod pids unlimited, maxPods 110, Memory QoS off, and
containers' cpu.weight by the runtimes' current formula (runc >= 1.3.2, crun >= 1.23).

Notes on stderr say what was skipped (other kinds, finished pods), rejected or
preempted, and which pods got a stand-in uid. A bad node file or bad flags exit 2 with
the document and field, or the flag, at fault.`,
		DisableFlagsInUseLine: true,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return cli.UsageError(fmt.Errorf("unexpected argument %q (one -f FILE holds every manifest)", args[0]))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Complete(cmd)
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&o.File, "filename", "f", "", "node `FILE`: an optional Node and its pods (YAML or JSON, several documents, a v1 List); - reads stdin")
	fl.StringVar(&o.CPU, "node-cpu", "", "the node's cpu capacity as a `QUANTITY` (3, 2500m)")
	fl.StringVar(&o.Memory, "node-memory", "", "the node's memory capacity as a `QUANTITY` (8Gi, 16G)")
	fl.StringVar(&o.QOSReserved, "qos-reserved", "", "the kubelet's --qos-reserved, `memory=P%`: the QoS tiers keep P% of the higher tiers' memory requests free (default: none, as the QOSReserved gate is off)")
	fl.StringVar(&o.Version, "cgroup-version", "1", "cgroup `VERSION` whose files to print: 1 (the kubelet's own units, cpu.shares) or 2 (cpu.weight, cpu.max, memory.max)")
	fl.StringVar(&o.Driver, "driver", string(cgroups.DriverCgroupfs), "the kubelet's cgroup `DRIVER`, cgroupfs or systemd (slice names)")
	fl.BoolVar(&o.JSON, "json", false, `print [{"path": ..., "container": {"name", "id"}, "files": [{"file": ..., "value": ...}, ...]}, ...] instead of the tree, files in write order ("container" on container cgroups only)`)
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	_ = cmd.RegisterFlagCompletionFunc("cgroup-version", cobra.FixedCompletions([]string{"1", "2"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("driver", cobra.FixedCompletions([]string{string(cgroups.DriverCgroupfs), string(cgroups.DriverSystemd)}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Complete notes which capacity flags were given: a flag not given leaves
// the capacity to the Node manifest or the host.
func (o *Options) Complete(cmd *cobra.Command) {
	o.cpuGiven, o.memoryGiven = cmd.Flags().Changed("node-cpu"), cmd.Flags().Changed("node-memory")
}

// Validate reads the flags, refusing a value that cannot describe a node
// with a usage error naming the flag.
func (o *Options) Validate() error {
	if err := o.validate(); err != nil {
		return cli.UsageError(err)
	}
	return nil
}

func (o *Options) validate() error {
	if o.File == "" {
		return errors.New("-f FILE is required (- reads stdin)")
	}
	var err error
	if o.cpuGiven {
		if o.nodeCPU, err = parseNodeQuantity("--node-cpu", o.CPU, pod.CPU); err != nil {
			return err
		}
	}
	if o.memoryGiven {
		if o.nodeMemory, err = parseNodeQuantity("--node-memory", o.Memory, pod.Memory); err != nil {
			return err
		}
	}
	if o.qosReserved, err = parseQOSReservedFlag(o.QOSReserved); err != nil {
		return err
	}
	switch o.Version {
	case "1":
		o.version = cgroups.V1
	case "2":
		o.version = cgroups.V2
	default:
		return fmt.Errorf("--cgroup-version %q: must be 1 or 2", o.Version)
	}
	switch d := cgroups.Driver(o.Driver); d {
	case cgroups.DriverCgroupfs, cgroups.DriverSystemd:
		o.driver = d
	default:
		return fmt.Errorf("--driver %q: must be %s or %s", o.Driver, cgroups.DriverCgroupfs, cgroups.DriverSystemd)
	}
	return nil
}

// Run reads the node file, builds its cgroups and prints them. Notes go to
// stderr; a bad file, or a flag the file shows cannot describe its node,
// is a usage error.
func (o *Options) Run(stdin io.Reader, stdout, stderr io.Writer) error {
	name, data, err := cli.ReadManifest(o.File, stdin)
	if err != nil {
		return cli.UsageError(err)
	}
	node, err := o.buildNode(data, stderr)
	var given kube.GivenError
	switch {
	case errors.As(err, &given):
		// The flag is at fault, not the file.
		return cli.UsageError(err)
	case err != nil:
		return cli.UsageError(fmt.Errorf("%s: %w", name, err))
	}
	if o.JSON {
		err = cli.WriteJSON(stdout, node.json())
	} else {
		err = node.writeTree(stdout)
	}
	if err != nil {
		return cli.OutputError(err)
	}
	return nil
}

// parseNodeQuantity reads a capacity flag as a Kubernetes quantity, in core
// units (cpu in millicores, memory in bytes, both rounded up as the kubelet
// reads quantities), within the bounds core accepts.
func parseNodeQuantity(flagName, s string, name pod.ResourceName) (*int64, error) {
	what, example, limit := "bytes", "8Gi", int64(cgroups.MaxQuantity)
	if name == pod.CPU {
		what, example, limit = "CPUs", "3 or 2500m", cgroups.MaxMilliCPU
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return nil, fmt.Errorf("%s %q: must be a quantity of %s such as %s: %v", flagName, s, what, example, err)
	}
	bound := resource.NewQuantity(limit, resource.BinarySI)
	if name == pod.CPU {
		bound = resource.NewMilliQuantity(limit, resource.DecimalSI)
	}
	if q.Sign() <= 0 || q.Cmp(*bound) > 0 {
		return nil, fmt.Errorf("%s %q: must be more than 0 and at most %s %s", flagName, s, bound.String(), what)
	}
	v := q.Value()
	if name == pod.CPU {
		v = q.MilliValue()
	}
	return &v, nil
}

// parseQOSReservedFlag reads the kubelet's --qos-reserved: resource=P%
// pairs separated by commas (a later pair for the same resource wins, as
// with the kubelet's map flags), checked by core with the kubelet's words.
func parseQOSReservedFlag(s string) (*int64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	m := map[string]string{}
	for _, pair := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(pair, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("--qos-reserved %q: %q must be resource=percentage, such as memory=100%%", s, pair)
		}
		m[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	p, err := cgroups.ParseQOSReserved(m)
	if err != nil {
		return nil, fmt.Errorf("--qos-reserved %q: %v", s, err)
	}
	return p, nil
}
