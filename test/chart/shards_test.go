// Copyright 2026 The agent-session-operator Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package chart

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// shards: 3 runs a StatefulSet of three Pods, each taking its shard from its ordinal for the
// manager and the store's front, a transcript volume per Pod and a Service per shard, and
// no Deployment or shared volume; the webhook and history Services select every Pod.
func TestChartRunsShards(t *testing.T) {
	bins := testenv.ToolDir(t, "hack/cluster-binaries.sh", "helm")
	out := testenv.Run(t, testenv.RepoRoot(), nil, filepath.Join(bins, "helm"), "template", release, "dist/chart", "-n", namespace, "--set", "shards=3")
	objs := objectsOf(t, out)
	for _, gone := range []string{"Deployment/agent-session-operator-controller-manager", "PersistentVolumeClaim/agent-session-operator-transcripts"} {
		if _, ok := objs[gone]; ok {
			t.Errorf("a sharded install still has %s", gone)
		}
	}
	var sts struct {
		Spec struct {
			Replicas             int
			VolumeClaimTemplates []struct{ Metadata struct{ Name string } }
			Template             struct {
				Spec struct {
					Containers []struct {
						Name string
						Args []string
					}
					Volumes []struct{ Name string }
				}
			}
		}
	}
	raw, _ := yaml.Marshal(objs["StatefulSet/agent-session-operator-controller-manager"])
	if err := yaml.Unmarshal(raw, &sts); err != nil || sts.Spec.Replicas != 3 {
		t.Fatalf("StatefulSet: %d replicas (%v), want 3:\n%s", sts.Spec.Replicas, err, raw)
	}
	if len(sts.Spec.VolumeClaimTemplates) != 1 || sts.Spec.VolumeClaimTemplates[0].Metadata.Name != "transcripts" {
		t.Errorf("claim templates: %+v, want one named transcripts", sts.Spec.VolumeClaimTemplates)
	}
	if slices.ContainsFunc(sts.Spec.Template.Spec.Volumes, func(v struct{ Name string }) bool { return v.Name == "transcripts" }) {
		t.Error("the Pod template names a transcripts volume of its own: every Pod would share one claim")
	}
	want := map[string][]string{
		"manager":          {"--shard=$(SHARD_INDEX)/3"},
		"transcript-store": {"--shard=$(SHARD_INDEX)/3", "--shard-url=https://agent-session-operator-shard-{i}." + namespace + ".svc:8090"},
	}
	for _, c := range sts.Spec.Template.Spec.Containers {
		var got []string
		for _, a := range c.Args {
			if strings.HasPrefix(a, "--shard=") || strings.HasPrefix(a, "--shard-url=") {
				got = append(got, a)
			}
		}
		if d := cmp.Diff(want[c.Name], got); d != "" {
			t.Errorf("%s's shard flags (-want +got):\n%s", c.Name, d)
		}
	}
	for _, i := range []string{"0", "1", "2"} {
		svc := objs["Service/agent-session-operator-shard-"+i]
		spec, _ := svc["spec"].(map[string]any)
		sel, _ := spec["selector"].(map[string]any)
		if sel["apps.kubernetes.io/pod-index"] != i {
			t.Errorf("shard %s's Service: %v", i, svc)
		}
	}
}
