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

package devcluster

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/agent-sessions/agent-session-operator/internal/memtune"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// The bench reads memory against the Deployment's limits, so the local processes must get
// the limit exactly as the Deployment's containers do: from limits.memory, in bytes.
func TestMemoryLimitIsTheDeployments(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config/manager/manager.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	for _, doc := range bytes.Split(raw, []byte("\n---\n")) {
		if err := yaml.Unmarshal(doc, &d); err == nil && d.Kind == "Deployment" {
			break
		}
	}
	seen := 0
	for _, c := range d.Spec.Template.Spec.Containers {
		var from string
		for _, e := range c.Env {
			if e.Name == memtune.ContainerLimitEnv && e.ValueFrom != nil && e.ValueFrom.ResourceFieldRef != nil {
				from = e.ValueFrom.ResourceFieldRef.Resource
			}
		}
		if from != "limits.memory" {
			t.Errorf("container %s: %s from %q, want limits.memory", c.Name, memtune.ContainerLimitEnv, from)
			continue
		}
		limit := c.Resources.Limits.Memory()
		if got := memoryLimit(memoryLimitMiB[c.Name]); valueOf(t, got) != limit.Value() {
			t.Errorf("container %s: devcluster passes %v, the Deployment %s (%d bytes)", c.Name, got, limit, limit.Value())
		}
		seen++
	}
	if seen != 2 {
		t.Errorf("%d containers checked, want the manager and the transcript-store", seen)
	}
}

func valueOf(t *testing.T, env []string) int64 {
	t.Helper()
	if len(env) != 1 {
		t.Fatalf("env %v, want one variable", env)
	}
	q, err := resource.ParseQuantity(env[0][len(memtune.ContainerLimitEnv)+1:])
	if err != nil {
		t.Fatal(err)
	}
	return q.Value()
}

// devcluster installs the shard label webhooks only for a sharded manager: it reads the
// shard from the manager's flags as the manager does.
func TestManagerShardFromFlags(t *testing.T) {
	for name, tc := range map[string]struct {
		args    []string
		sharded bool
	}{
		"no flag":         {args: []string{"--leader-elect=false"}},
		"one of one":      {args: []string{"--shard=0/1"}},
		"--shard=i/n":     {args: []string{"--x", "--shard=1/2"}, sharded: true},
		"--shard i/n":     {args: []string{"--shard", "0/3"}, sharded: true},
		"the last one":    {args: []string{"--shard=0/2", "--shard=0/1"}},
		"a malformed one": {args: []string{"--shard=2/2"}},
	} {
		if got := managerShard(tc.args).Sharded(); got != tc.sharded {
			t.Errorf("%s: sharded = %v, want %v", name, got, tc.sharded)
		}
	}
}
