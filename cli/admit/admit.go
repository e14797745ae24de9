package admit

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nodeproof/nodeproof/agent/kube"
	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/preemption"
	"github.com/nodeproof/nodeproof/phrase"
)

// Options are the flags of `nodeproof admit`.
type Options struct {
	// File is the node file; "-" is stdin.
	File string
	// JSON prints the decisions as a JSON array.
	JSON bool
}

// NewCommand is `nodeproof admit`.
func NewCommand() *cobra.Command {
	var o Options
	cmd := &cobra.Command{
		Use:                   "admit -f FILE [--json]",
		Short:                 "admit the pods of a manifest file to its Node in order, with critical pod preemption",
		Long:                  long,
		DisableFlagsInUseLine: true,
		Args:                  cli.NoArguments,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&o.File, "filename", "f", "", "manifest `FILE` holding one Node and its pods (- reads stdin)")
	fl.BoolVar(&o.JSON, "json", false, "print the decisions as a JSON array")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	return cmd
}

// Validate refuses a run without a file.
func (o *Options) Validate() error {
	if o.File == "" {
		return cli.UsageError(errors.New("-f FILE is required (- reads stdin)"))
	}
	return nil
}

// Run reads the node file and prints the decisions. A file that cannot be
// read or describes no node is a usage error; output that cannot be
// written fails the command.
func (o *Options) Run(stdin io.Reader, stdout, stderr io.Writer) error {
	name, data, err := cli.ReadManifest(o.File, stdin)
	if err != nil {
		return cli.UsageError(err)
	}
	nf, err := kube.ReadNodeFile(data)
	if err == nil && nf.Node == nil {
		err = errors.New("no Node: the file must hold the Node the pods are admitted to (kind: Node, with status.allocatable)")
	}
	if err != nil {
		return cli.UsageError(fmt.Errorf("%s: %w", name, err))
	}
	play, err := kube.PlayNode(nf, nf.Allocatable, nf.NodeOrigin, nf.AllocatableField)
	if err != nil {
		var input *kube.Error
		if errors.As(err, &input) {
			return cli.UsageError(fmt.Errorf("%s: %w", name, err))
		}
		return cli.Failed(fmt.Errorf("%s: %w", name, err))
	}
	if o.JSON {
		// stdout holds the JSON array alone; what the reading left out
		// is still worth a word.
		for _, note := range nf.Notes() {
			fmt.Fprintf(stderr, "nodeproof admit: note: %s\n", note)
		}
		if err := cli.WriteJSON(stdout, decisionsJSON(play.Decisions)); err != nil {
			return cli.Failed(fmt.Errorf("writing JSON: %w", err))
		}
		return nil
	}
	if _, err := io.WriteString(stdout, render(nf, play.Decisions)); err != nil {
		return cli.Failed(err)
	}
	return nil
}

// long is the help of `nodeproof admit`.
const long = `Plays the kubelet's (v1.36) admission of pods to one node, with critical pod
preemption, and prints each decision.

FILE is a node file (docs/node-file.md, the reading nodeproof cgroups shares):
Kubernetes manifests (YAML or JSON, documents split by "---", v1 Lists as
kubectl prints them) holding exactly one Node and its pods, for instance
  kubectl get node NODE -o yaml; echo ---; \
  kubectl get pods -A --field-selector spec.nodeName=NODE -o yaml
The node's room is its status.allocatable; a Node without allocatable uses
status.capacity instead, as the API server defaults it. It must list pods.
Pods whose status.phase is Running are on the node already (and must fit
it). Every other pod arrives, in file order, and is admitted against the
node as the earlier decisions left it: preempted pods gone, admitted pods
running. Pods in a terminal phase (Succeeded, Failed) and documents of
other kinds are skipped, with a note. Static and mirror pods
(kubernetes.io/config.source, kubernetes.io/config.mirror annotations) and
pods of priority 2000000000 or more are critical; a mirror pod stands for
its static pod.

There is no real kubelet: every kill of a preempted pod succeeds. There are no
device plugins: an extended resource (example.com/gpu) is a plain countable
node resource, checked when the node's allocatable lists it.

Output: for each arriving pod, admitted or rejected with the kubelet's reason
and message, what preemption had to free, and the pods preempted for it in
eviction order. --json prints
  [{"pod": "ns/name", "admitted": true, "reason": "", "message": "", "preempted": ["ns/name"]}]
(skipped documents and pods are noted on stderr). Exit status: 0 when every
arrival was decided, rejections included; 2 for bad flags or input (a
manifest that does not decode, no Node or two, duplicate pods, running pods
that do not fit); 1 when the output cannot be written.`

// render is the human-readable report: the node, the pods running before
// the first arrival, then each decision in arrival order.
func render(nf *kube.NodeFile, run []kube.Decision) string {
	var b strings.Builder
	fmt.Fprintf(&b, "node %s, %s: %s\n", nf.Node.Name, nf.AllocatableSource(), kube.FormatResources(nf.Allocatable))

	fmt.Fprintf(&b, "running before the first arrival: %d\n", len(nf.Running))
	width := 0
	for _, r := range nf.Running {
		width = max(width, len(r.Pod.Key()))
	}
	for _, r := range nf.Running {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, r.Pod.Key(), describePod(r.Pod))
	}

	fmt.Fprintf(&b, "arrivals: %d\n", len(run))
	admitted, preempted := 0, 0
	for i, d := range run {
		r := d.Result
		fmt.Fprintf(&b, "%d. %s (%s): ", i+1, d.Pod.Key(), describePod(d.Pod))
		if r.Admitted {
			admitted++
			b.WriteString("admitted")
			if len(r.Evicted) > 0 {
				fmt.Fprintf(&b, " after preempting %d %s", len(r.Evicted), phrase.Noun(len(r.Evicted), "pod", "pods"))
			}
			b.WriteString("\n")
		} else {
			fmt.Fprintf(&b, "rejected\n   reason:  %s\n   message: %s\n", r.Reason, r.Message)
		}
		if len(r.Requirements) > 0 {
			fmt.Fprintf(&b, "   to free: %s\n", formatRequirements(r.Requirements))
		}
		for j, v := range r.Evicted {
			if j == 0 {
				b.WriteString("   preempted, in eviction order:\n")
			}
			fmt.Fprintf(&b, "     %d. %s (%s)\n", j+1, v.Key(), describePod(v))
		}
		preempted += len(r.Evicted)
	}
	for _, note := range nf.Notes() {
		fmt.Fprintf(&b, "%s\n", note)
	}
	fmt.Fprintf(&b, "summary: %d admitted, %d rejected, %d preempted\n", admitted, len(run)-admitted, preempted)
	return b.String()
}

// describePod gives the QoS class and, for a critical pod, why it is one.
func describePod(p *pod.Pod) string {
	var why []string
	if p.IsStatic() {
		why = append(why, "static")
	}
	if p.IsMirror() {
		why = append(why, "mirror")
	}
	if p.Priority != nil && *p.Priority >= pod.SystemCriticalPriority {
		why = append(why, fmt.Sprintf("priority %d", *p.Priority))
	}
	if len(why) == 0 {
		return string(p.QOS())
	}
	return fmt.Sprintf("%s, critical: %s", p.QOS(), strings.Join(why, ", "))
}

// formatRequirements keeps the requirements' order, that of the failure
// reasons.
func formatRequirements(reqs preemption.Requirements) string {
	parts := make([]string, len(reqs))
	for i, r := range reqs {
		parts[i] = fmt.Sprintf("%s %s", r.Resource, kube.FormatQuantity(r.Resource, r.Quantity))
	}
	return strings.Join(parts, ", ")
}

// decisionJSON is one element of the --json array.
type decisionJSON struct {
	Pod       string   `json:"pod"`
	Admitted  bool     `json:"admitted"`
	Reason    string   `json:"reason"`
	Message   string   `json:"message"`
	Preempted []string `json:"preempted"`
}

// decisionsJSON is the --json array; arrays are never null, so a script
// needs no nil checks.
func decisionsJSON(run []kube.Decision) []decisionJSON {
	out := make([]decisionJSON, 0, len(run))
	for _, d := range run {
		e := decisionJSON{Pod: d.Pod.Key(), Admitted: d.Result.Admitted, Reason: d.Result.Reason,
			Message: d.Result.Message, Preempted: []string{}}
		for _, v := range d.Result.Evicted {
			e.Preempted = append(e.Preempted, v.Key())
		}
		out = append(out, e)
	}
	return out
}
