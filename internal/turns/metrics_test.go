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

package turns

import (
	"math"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// A priced turn adds its tokens and cost to the model counters, labelled by namespace,
// agent and model only, and records its priced usage in the transcript and the result.
func TestModelUsageMetrics(t *testing.T) {
	agent := scriptedAgent("priced", rule("^ping", "pong"))
	agent.Spec.Model.Name = "m1"
	agent.Spec.Model.Pricing = &sessionsv1alpha1.Pricing{InputPerMillion: "1000", OutputPerMillion: "2000", Currency: "EUR"}
	f := newFixture(t, []client.Object{agent, session("agent:priced:main", "priced", "sid-priced")})
	in := testutil.ToFloat64(modelTokensTotal.WithLabelValues(ns, "priced", "m1", "input"))
	cost := testutil.ToFloat64(modelCostTotal.WithLabelValues(ns, "priced", "m1", "EUR"))

	req := turnReq("m/round-1", "agent:priced:main", "ping")
	f.submit(req)
	res := f.await(req.ID)
	if res.Err != nil || res.Currency != "EUR" || res.CostNanos == 0 {
		t.Fatalf("result %+v: want a priced turn", res)
	}
	wantNanos := (res.InputTokens*1000 + res.OutputTokens*2000) * 1_000_000_000 / 1_000_000
	if res.CostNanos != wantNanos {
		t.Errorf("CostNanos %d, want %d", res.CostNanos, wantNanos)
	}
	if got := testutil.ToFloat64(modelTokensTotal.WithLabelValues(ns, "priced", "m1", "input")) - in; got != float64(res.InputTokens) {
		t.Errorf("input tokens counted %v, want %d", got, res.InputTokens)
	}
	// A float counter: compare the added amount, not the exact sum of earlier runs (-count).
	if got := testutil.ToFloat64(modelCostTotal.WithLabelValues(ns, "priced", "m1", "EUR")) - cost; math.Abs(got-float64(wantNanos)/1e9) > 1e-9 {
		t.Errorf("cost counted %v, want %v", got, float64(wantNanos)/1e9)
	}
}
