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

package docs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/yaml"

	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow"
	"github.com/agent-sessions/agent-session-operator/controllers/sessionschedule"
	"github.com/agent-sessions/agent-session-operator/controllers/toolapproval"
	"github.com/agent-sessions/agent-session-operator/internal/budget"
	"github.com/agent-sessions/agent-session-operator/internal/delivery"
	"github.com/agent-sessions/agent-session-operator/internal/eventrec"
	"github.com/agent-sessions/agent-session-operator/internal/sandbox"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/memory"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

// exporters are the registries the two programs serve, filled as the programs fill them: the
// manager's with each package's RegisterMetrics (cmd/manager's registerMetrics;
// test/layers checks that every RegisterMetrics is called from a program), the transcript
// store's as it builds its store and doors.
func exporters() []prometheus.Registerer {
	managerReg := prometheus.NewRegistry()
	ownerflow.RegisterMetrics(managerReg)
	sessionschedule.RegisterMetrics(managerReg)
	toolapproval.RegisterMetrics(managerReg)
	turns.RegisterMetrics(managerReg)
	budget.RegisterMetrics(managerReg)
	delivery.RegisterMetrics(managerReg)
	eventrec.RegisterMetrics(managerReg)
	sandbox.RegisterMetrics(managerReg)
	storeReg := prometheus.NewRegistry()
	store.NewMetrics(storeReg)
	memory.NewMetrics(storeReg)
	transcriptstore.NewHookHandler(transcriptstore.HookOptions{Registry: storeReg})
	return []prometheus.Registerer{managerReg, storeReg}
}

// exported says whether a metric of that name is registered in one of regs. A registry
// lists no collectors, so the name is probed: registering a descriptor of the same name
// fails exactly when one is registered (a probe that succeeds is taken back).
func exported(regs []prometheus.Registerer, name string) bool {
	for _, reg := range regs {
		probe := probeCollector{prometheus.NewDesc(name, "probe", nil, nil)}
		if err := reg.Register(probe); err != nil {
			return true
		}
		reg.Unregister(probe)
	}
	return false
}

type probeCollector struct{ desc *prometheus.Desc }

func (p probeCollector) Describe(ch chan<- *prometheus.Desc) { ch <- p.desc }
func (p probeCollector) Collect(chan<- prometheus.Metric)    {}

// TestEveryDocumentedMetricIsRegistered: every metric docs/reference/metrics.md names is
// served by the manager or the transcript store (a metric moved to another package must
// still be registered where it is counted).
func TestEveryDocumentedMetricIsRegistered(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot, "docs", "reference", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	regs := exporters()
	names := map[string]bool{}
	for _, n := range metricRef.FindAllString(string(raw), -1) {
		names[n] = true
	}
	if len(names) < 20 {
		t.Fatalf("metrics.md names %d metrics; the pattern no longer matches the page", len(names))
	}
	for n := range names {
		if !exported(regs, n) && !exported(regs, strings.TrimSuffix(n, "_bucket")) {
			t.Errorf("docs/reference/metrics.md names %s, which neither the manager nor the transcript store registers", n)
		}
	}
	if exported(regs, "agent_sessions_no_such_metric") {
		t.Error("the probe finds a metric nobody defines: the check is broken")
	}
}

var metricRef = regexp.MustCompile(`\b(?:agent_sessions|transcript)_[a-z_]+\b`)

// checkExprs fails for a metric an expression names that nothing exports.
func checkExprs(t *testing.T, where string, exprs []string, regs []prometheus.Registerer) {
	t.Helper()
	for _, e := range exprs {
		for _, ref := range metricRef.FindAllString(e, -1) {
			base := ref
			for _, suffix := range []string{"_bucket", "_count", "_sum"} {
				if b, ok := strings.CutSuffix(ref, suffix); ok && exported(regs, b) {
					base = b
				}
			}
			if !exported(regs, base) {
				t.Errorf("%s: %q names %s, which no component exports", where, e, ref)
			}
		}
	}
}

// The shipped alerts and dashboard query only metrics that exist: a renamed metric must not
// leave a rule that can never fire or a panel that stays empty.
func TestMonitoringNamesExportedMetrics(t *testing.T) {
	names := exporters()
	dir := filepath.Join(repoRoot, "config", "prometheus")

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
