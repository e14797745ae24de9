package main

import (
	"encoding/json"
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

// admitOptions are the validated flags of `nodeproof admit`.
type admitOptions struct {
	file   string // "-" is stdin
	asJSON bool
}

func newAdmitCommand() *cobra.Command {
	var opts admitOptions
	cmd := &cobra.Command{
		Use:                   "admit -f FILE [--json]",
		Short:                 "admit the pods of a manifest file to its Node in order, with critical pod preemption",
		Long:                  admitLong,
		DisableFlagsInUseLine: true,
		Args:                  cli.NoArguments,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.file == "" {
				return cli.UsageError(errors.New("-f FILE is required (- reads stdin)"))
			}
			return cli.Exit(runAdmit(opts, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.file, "filename", "f", "", "manifest `FILE` holding one Node and its pods (- reads stdin)")
	fl.BoolVar(&opts.asJSON, "json", false, "print the decisions as a JSON array")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	return cmd
}

func runAdmit(opts admitOptions, stdin io.Reader, stdout, stderr io.Writer) int {
	data, err := readManifestFile(opts.file, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "nodeproof admit: %v\n", err)
		return 2
	}
	name := opts.file
	if name == "-" {
		name = "stdin"
	}
	sc, err := newAdmitScenario(data)
	if err != nil {
		fmt.Fprintf(stderr, "nodeproof admit: %s: %v\n", name, err)
		return 2
	}
	run, err := sc.play()
	if err != nil {
		fmt.Fprintf(stderr, "nodeproof admit: %s: %v\n", name, err)
		var input *kube.Error
		if errors.As(err, &input) {
			return 2
		}
		return 1
	}
	if opts.asJSON {
		// stdout holds the JSON array alone; what the reading left out
		// is still worth a word.
		noteSkipped(stderr, "admit", sc.file)
		if err := writeAdmitJSON(stdout, run); err != nil {
			fmt.Fprintf(stderr, "nodeproof admit: writing JSON: %v\n", err)
			return 1
		}
		return 0
	}
	if _, err := io.WriteString(stdout, sc.render(run)); err != nil {
		fmt.Fprintf(stderr, "nodeproof admit: %v\n", err)
		return 1
	}
	return 0
}

// admitLong is the help of `nodeproof admit`.
const admitLong = `Plays the kubelet's (v1.36) admission of pods to one node, with critical pod
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

// admitScenario is a node file read for admission: it must hold a Node.
type admitScenario struct {
	file *kube.NodeFile
}

// newAdmitScenario reads the node file (kube.ReadNodeFile, shared with
// `nodeproof cgroups`). Every error names the document.
func newAdmitScenario(data []byte) (*admitScenario, error) {
	nf, err := kube.ReadNodeFile(data)
	if err != nil {
		return nil, err
	}
	if nf.Node == nil {
		return nil, errors.New("no Node: the file must hold the Node the pods are admitted to (kind: Node, with status.allocatable)")
	}
	return &admitScenario{file: nf}, nil
}

// play admits the arrivals in order (playNode, shared with `nodeproof
// cgroups`).
func (sc *admitScenario) play() ([]admitDecision, error) {
	p, err := playNode(sc.file, sc.file.Allocatable, sc.file.NodeOrigin, sc.file.AllocatableField)
	if err != nil {
		return nil, err
	}
	return p.decisions, nil
}

// render is the human-readable report: the node, the pods running before
// the first arrival, then each decision in arrival order.
func (sc *admitScenario) render(run []admitDecision) string {
	var b strings.Builder
	nf := sc.file
	fmt.Fprintf(&b, "node %s, %s: %s\n", nf.Node.Name, allocatableSource(nf), formatResources(nf.Allocatable))

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
		r := d.result
		fmt.Fprintf(&b, "%d. %s (%s): ", i+1, d.pod.Key(), describePod(d.pod))
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
	for _, s := range nf.Skipped {
		fmt.Fprintf(&b, "%s\n", s.Note())
	}
	for _, f := range nf.Finished {
		fmt.Fprintf(&b, "%s\n", finishedNote(f))
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

func formatResources(l pod.ResourceList) string {
	parts := make([]string, 0, len(l))
	for _, name := range l.Names() {
		parts = append(parts, fmt.Sprintf("%s %s", name, kube.FormatQuantity(name, l[name])))
	}
	return strings.Join(parts, ", ")
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

// admitJSON is one element of the --json array.
type admitJSON struct {
	Pod       string   `json:"pod"`
	Admitted  bool     `json:"admitted"`
	Reason    string   `json:"reason"`
	Message   string   `json:"message"`
	Preempted []string `json:"preempted"`
}

// writeAdmitJSON writes the decisions; arrays are never null, so a script
// needs no nil checks.
func writeAdmitJSON(w io.Writer, run []admitDecision) error {
	out := make([]admitJSON, 0, len(run))
	for _, d := range run {
		e := admitJSON{Pod: d.pod.Key(), Admitted: d.result.Admitted, Reason: d.result.Reason,
			Message: d.result.Message, Preempted: []string{}}
		for _, v := range d.result.Evicted {
			e.Preempted = append(e.Preempted, v.Key())
		}
		out = append(out, e)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	// Messages hold "<" and ">" rarely, but a reader should see them as is.
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}
