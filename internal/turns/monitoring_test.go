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
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/yaml"

	"github.com/agent-sessions/agent-session-operator/internal/budget"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
)

// exportedNames are the metric names the manager and the transcript store export.
func exportedNames(t *testing.T) map[string]bool {
	t.Helper()
	cs := []prometheus.Collector{turnsTotal, turnDuration, modelTokensTotal, modelCostTotal, modelCallDuration,
		toolCallsTotal, toolCallDuration, FinishedTotal, laneQueueDepth, turnsRunning, budget.WindowSpendGauge, budget.WindowLimitGauge,
		compactionsTotal, compactionTokensSaved,
		approvalsTotal, approvalDecisionSeconds, approvalsOverdue}
	m := store.NewMetrics(nil)
	v := reflect.ValueOf(m).Elem()
	for i := range v.NumField() {
		if c, ok := v.Field(i).Interface().(prometheus.Collector); ok {
			cs = append(cs, c)
		}
	}
	fq := regexp.MustCompile(`fqName: "([a-z_]+)"`)
	names := map[string]bool{}
	for _, c := range cs {
		ch := make(chan *prometheus.Desc, 4)
		go func() { c.Describe(ch); close(ch) }()
		for d := range ch {
			if n := fq.FindStringSubmatch(d.String()); n != nil {
				names[n[1]] = true
			}
		}
	}
	return names
}

var metricRef = regexp.MustCompile(`\b(?:agent_sessions|transcript)_[a-z_]+\b`)

// checkExprs fails for a metric an expression names that nothing exports.
func checkExprs(t *testing.T, where string, exprs []string, names map[string]bool) {
	t.Helper()
	for _, e := range exprs {
		for _, ref := range metricRef.FindAllString(e, -1) {
			base := ref
			for _, suffix := range []string{"_bucket", "_count", "_sum"} {
				if b, ok := strings.CutSuffix(ref, suffix); ok && names[b] {
					base = b
				}
			}
			if !names[base] {
				t.Errorf("%s: %q names %s, which no component exports", where, e, ref)
			}
		}
	}
}

// The shipped alerts and dashboard query only metrics that exist: a renamed metric must not
// leave a rule that can never fire or a panel that stays empty.
func TestMonitoringNamesExportedMetrics(t *testing.T) {
	names := exportedNames(t)
	dir := filepath.Join(testenv.RepoRoot(), "config", "prometheus")

	raw, err := os.ReadFile(filepath.Join(dir, "rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var rule struct {
		Spec struct {
			Groups []struct {
				Rules []struct {
					Alert string `json:"alert"`
					Expr  string `json:"expr"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &rule); err != nil {
		t.Fatal(err)
	}
	var exprs []string
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" || r.Expr == "" {
				t.Errorf("a rule without alert name or expr: %+v", r)
			}
			exprs = append(exprs, r.Expr)
		}
	}
	if len(exprs) < 5 {
		t.Errorf("%d alerts, want the five of issue 21 (stuck, backlog, provider, store, spend)", len(exprs))
	}
	checkExprs(t, "rules.yaml", exprs, names)

	raw, err = os.ReadFile(filepath.Join(dir, "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title, UID string
		Panels     []struct {
			ID      int
			Type    string
			Title   string
			GridPos *struct{ X, Y, W, H int } `json:"gridPos"`
			Targets []struct {
				RefID string `json:"refId"`
				Expr  string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if err := dec.Decode(&dash); err != nil {
		t.Fatal(err)
	}
	if dash.Title == "" || dash.UID == "" || len(dash.Panels) == 0 {
		t.Fatalf("dashboard without title, uid or panels")
	}
	ids := map[int]bool{}
	exprs = nil
	for _, p := range dash.Panels {
		if ids[p.ID] || p.Type == "" || p.Title == "" || p.GridPos == nil || p.GridPos.W == 0 || len(p.Targets) == 0 {
			t.Errorf("panel %d %q: a unique id, a type, a title, a grid position and targets are required", p.ID, p.Title)
		}
		ids[p.ID] = true
		for _, tg := range p.Targets {
			if tg.RefID == "" || tg.Expr == "" {
				t.Errorf("panel %q: a target without refId or expr", p.Title)
			}
			exprs = append(exprs, tg.Expr)
		}
	}
	checkExprs(t, "dashboard.json", exprs, names)
}
