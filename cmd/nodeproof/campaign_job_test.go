package main

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nodeproof/nodeproof/campaign"
	"github.com/nodeproof/nodeproof/cli"
	campaigncmd "github.com/nodeproof/nodeproof/cli/campaign"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/reportview"
	"github.com/nodeproof/nodeproof/simreport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

const campaignJobFile = "../../deploy/campaign/job.yaml"

// campaignManifests are the objects of deploy/campaign/job.yaml.
type campaignManifests struct {
	plan *corev1.ConfigMap
	pvc  *corev1.PersistentVolumeClaim
	job  *batchv1.Job
}

// readCampaignManifests decodes every document of job.yaml strictly (an
// unknown or misspelt field fails) into its k8s.io/api type.
func readCampaignManifests(t *testing.T) campaignManifests {
	t.Helper()
	data, err := os.ReadFile(campaignJobFile)
	require.NoError(t, err)
	var m campaignManifests
	for i, doc := range strings.Split(string(data), "\n---\n") {
		var meta struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		require.NoError(t, yaml.Unmarshal([]byte(doc), &meta), "document %d", i)
		var into any
		switch meta.APIVersion + " " + meta.Kind {
		case "v1 ConfigMap":
			m.plan = &corev1.ConfigMap{}
			into = m.plan
		case "v1 PersistentVolumeClaim":
			m.pvc = &corev1.PersistentVolumeClaim{}
			into = m.pvc
		case "batch/v1 Job":
			m.job = &batchv1.Job{}
			into = m.job
		default:
			t.Fatalf("document %d: unexpected %s %s", i, meta.APIVersion, meta.Kind)
		}
		require.NoError(t, yaml.UnmarshalStrict([]byte(doc), into), "document %d (%s)", i, meta.Kind)
	}
	require.NotNil(t, m.plan, "job.yaml has the plan's ConfigMap")
	require.NotNil(t, m.pvc, "job.yaml has the results' PersistentVolumeClaim")
	require.NotNil(t, m.job, "job.yaml has the Job")
	return m
}

// mountPath is where the container mounts the named volume.
func mountPath(t *testing.T, c corev1.Container, volume string) string {
	t.Helper()
	for _, m := range c.VolumeMounts {
		if m.Name == volume {
			return m.MountPath
		}
	}
	t.Fatalf("container %s mounts no volume %s", c.Name, volume)
	return ""
}

// TestCampaignManifests: the Job is Indexed, its completions are the plan's
// shards, its pods run as non-root on the results volume, and its command
// line reads the plan where the ConfigMap is mounted.
func TestCampaignManifests(t *testing.T) {
	m := readCampaignManifests(t)
	job := m.job.Spec
	require.NotNil(t, job.CompletionMode)
	assert.Equal(t, batchv1.IndexedCompletion, *job.CompletionMode)

	planText, ok := m.plan.Data["plan.yaml"]
	require.True(t, ok, "the ConfigMap holds plan.yaml")
	var plan campaign.Plan
	require.NoError(t, yaml.UnmarshalStrict([]byte(planText), &plan), "the plan decodes strictly")
	require.NotNil(t, job.Completions)
	assert.Equal(t, int32(plan.Shards), *job.Completions, "completions are the plan's shards")
	require.NotNil(t, job.Parallelism)
	assert.LessOrEqual(t, *job.Parallelism, *job.Completions)
	require.NotNil(t, job.BackoffLimitPerIndex, "a lost shard is retried alone")
	resolved, err := plan.Resolve(properties.Suites(), func(string) ([]campaign.FuzzTarget, error) {
		return []campaign.FuzzTarget{{Package: "fuzz/checkpointdecode", Name: "FuzzCheckpointDecode"}}, nil
	})
	require.NoError(t, err, "the Job's plan is valid")
	assert.Equal(t, plan.Shards, resolved.Shards)

	pod := m.job.Spec.Template.Spec
	assert.Equal(t, corev1.RestartPolicyNever, pod.RestartPolicy, "podFailurePolicy needs restartPolicy Never")
	require.NotNil(t, pod.SecurityContext)
	assert.Equal(t, ptrTo(true), pod.SecurityContext.RunAsNonRoot)
	require.Len(t, pod.Containers, 1)
	c := pod.Containers[0]
	require.NotNil(t, c.SecurityContext)
	assert.Equal(t, ptrTo(false), c.SecurityContext.AllowPrivilegeEscalation)
	assert.Equal(t, ptrTo(true), c.SecurityContext.ReadOnlyRootFilesystem)
	assert.False(t, c.Resources.Requests.Cpu().IsZero(), "the shard requests CPU")
	assert.False(t, c.Resources.Limits.Memory().IsZero(), "the shard's memory is limited")

	// The pod failure policy names the container and the exit codes of
	// nodeproof (exit.go): 1 found a failure, 2 bad input.
	require.NotNil(t, job.PodFailurePolicy)
	actions := map[int32]batchv1.PodFailurePolicyAction{}
	for _, r := range job.PodFailurePolicy.Rules {
		if r.OnExitCodes != nil {
			assert.Equal(t, ptrTo(c.Name), r.OnExitCodes.ContainerName)
			for _, v := range r.OnExitCodes.Values {
				actions[v] = r.Action
			}
		}
	}
	assert.Equal(t, map[int32]batchv1.PodFailurePolicyAction{cli.StatusFailed: batchv1.PodFailurePolicyActionFailIndex, cli.StatusUsage: batchv1.PodFailurePolicyActionFailJob}, actions)

	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v
	}
	require.NotNil(t, volumes["results"].PersistentVolumeClaim)
	assert.Equal(t, m.pvc.Name, volumes["results"].PersistentVolumeClaim.ClaimName)
	require.NotNil(t, volumes["plan"].ConfigMap)
	assert.Equal(t, m.plan.Name, volumes["plan"].ConfigMap.Name)
	assert.Equal(t, []string{"campaign", "--plan", mountPath(t, c, "plan") + "/plan.yaml", "--out", mountPath(t, c, "results")}, c.Args)
	assert.Contains(t, m.pvc.Spec.AccessModes, corev1.ReadWriteMany, "shards on several nodes write the volume at once")
}

// TestCampaignJobEveryIndex builds the image's binaries with the script the
// Dockerfile runs, checks that they are static, then plays the Job here:
// the static nodeproof runs the Job's own command line once for every index
// of a small plan (3 shards; 4 simulation seeds of one simulated hour, one
// suite from two seeds, one fuzz target for a second), with the volumes
// mapped to directories. Each unit runs in exactly one shard, and the merge
// of the shards is one passing report.
func TestCampaignJobEveryIndex(t *testing.T) {
	bin := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "sh", "deploy/campaign/build.sh", bin, "./fuzz/checkpointdecode")
	build.Dir = "../.."
	out, err := build.CombinedOutput()
	require.NoError(t, err, "build.sh: %s", out)
	nodeproof := filepath.Join(bin, "nodeproof")
	fuzzBinary := filepath.Join(bin, "fuzz", "fuzz", "checkpointdecode", "checkpointdecode.test")
	for _, path := range []string{nodeproof, fuzzBinary} {
		f, err := elf.Open(path)
		require.NoError(t, err)
		for _, p := range f.Progs {
			assert.NotEqual(t, elf.PT_INTERP, p.Type, "%s has an ELF interpreter: it is not static", path)
		}
		f.Close()
	}
	require.FileExists(t, filepath.Join(bin, "fuzz", "fuzz", "checkpointdecode", "testdata", "fuzz", "FuzzCheckpointDecode", "spec-example"),
		"the seed corpus sits beside the test binary")

	m := readCampaignManifests(t)
	c := m.job.Spec.Template.Spec.Containers[0]
	// The volumes of the pod, as directories here.
	planDir, results, scratch := t.TempDir(), t.TempDir(), t.TempDir()
	mounts := map[string]string{mountPath(t, c, "plan"): planDir, mountPath(t, c, "results"): results}
	require.NoError(t, os.WriteFile(filepath.Join(planDir, "plan.yaml"), []byte(`shards: 3
sim:
  seeds: 1..4
  hours: 1
suites:
  names: ^cgroups$
  seeds: 1..2
  checks: 20
  steps: 20
fuzz:
  targets: FuzzCheckpointDecode
  duration: 1s
  binaries: `+filepath.Join(bin, "fuzz")+"\n"), 0o644))
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = a
		for mount, dir := range mounts {
			if a == mount || strings.HasPrefix(a, mount+"/") {
				args[i] = dir + strings.TrimPrefix(a, mount)
			}
		}
	}
	for index := range 3 {
		cmd := exec.CommandContext(ctx, nodeproof, args...)
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", campaigncmd.JobIndexEnv, index), "TMPDIR="+scratch)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(t, cmd.Run(), "shard %d: %s", index, stderr.String())
		assert.Equal(t, filepath.Join(results, campaign.ShardFileName(index))+"\n", stdout.String())
	}

	ran := map[string]int{}
	for index := range 3 {
		rep, rec, err := reportview.ReadShard(filepath.Join(results, campaign.ShardFileName(index)))
		require.NoError(t, err)
		assert.True(t, rep.Passed, "shard %d", index)
		for _, h := range rec.Ran() {
			ran[h.Unit.String()]++
		}
		for _, f := range rep.Fuzz {
			assert.GreaterOrEqual(t, f.Seconds, 1.0, "the fuzz target ran for its duration")
		}
	}
	var units []string
	for u, n := range ran {
		assert.Equal(t, 1, n, "%s ran %d times", u, n)
		units = append(units, u)
	}
	sort.Strings(units)
	assert.Equal(t, []string{"fuzz FuzzCheckpointDecode in ./fuzz/checkpointdecode", "sim seed 1", "sim seed 2", "sim seed 3", "sim seed 4",
		"suite cgroups seed 1", "suite cgroups seed 2"}, units)
	// Whether one second finds a new input depends on the machine's load,
	// so only the place is checked.
	assert.DirExists(t, filepath.Join(results, "fuzz-cache", "fuzz", "checkpointdecode"), "the fuzzer keeps its inputs on the results volume")

	report := t.TempDir()
	code, _, stderr := runNodeproof("", "report", "--merge", results, "--out", report)
	require.Equal(t, cli.StatusOK, code, stderr)
	var merged struct {
		Passed   bool               `json:"passed"`
		Suites   []reportview.Suite `json:"suites"`
		Sim      simreport.Section  `json:"sim"`
		Campaign campaign.Section   `json:"campaign"`
	}
	data, err := os.ReadFile(filepath.Join(report, "report.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &merged))
	assert.True(t, merged.Passed)
	assert.Equal(t, 7, merged.Campaign.Units)
	assert.Equal(t, 4, merged.Sim.Seeds)
	require.Len(t, merged.Suites, 1)
	assert.Equal(t, 40, merged.Suites[0].Checks, "the suite's two runs of 20 checks are summed")
	require.Len(t, merged.Campaign.Fuzz, 1)
	assert.True(t, merged.Campaign.Fuzz[0].Passed)
}

func ptrTo[T any](v T) *T { return &v }
