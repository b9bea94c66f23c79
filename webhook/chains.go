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

package webhook

import (
	"context"
	"fmt"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
)

// chains holds the limits on what agents' tools start: the hop count each tool-made object
// carries, and the per-namespace rate of tool-made objects.
type chains struct {
	rate *toolRate
	// defaultPerMinute is the operator's rate when the SessionPolicy sets none.
	defaultPerMinute int
}

// judgeChain returns a denial for an object over the hop limit or, when a session tool made
// it (it carries a hop count, which only the manager may set), over the namespace's rate;
// else "". Call it last: it takes a rate token.
func (c chains) judgeChain(ctx context.Context, annotations map[string]string, ns string, p *v1.SessionPolicySpec) string {
	if _, tool := annotations[v1.HopsAnnotation]; !tool {
		return ""
	}
	hops, err := policy.HopsOf(annotations)
	if err != nil {
		return err.Error()
	}
	if why := policy.CheckHops(hops, p); why != "" {
		return why
	}
	if c.rate == nil || isDryRun(ctx) {
		return ""
	}
	perMinute := policy.ToolCreatesPerMinute(p, c.defaultPerMinute)
	if !c.rate.allow(ns, perMinute) {
		return policy.RateDenial(perMinute)
	}
	return ""
}

func managerOnly(annotation string) string {
	return fmt.Sprintf("annotation %s is set only by the operator's session tools; remove it (a person's send or spawn starts a new chain)", annotation)
}
