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

package main

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/agent-sessions/agent-session-operator/internal/devcluster"
)

// stage is one histogram on the send path, read from the API server's or the manager's
// metrics: its time per send over a window says where a send's latency goes.
type stage struct {
	figure, source, family string
	labels                 map[string]string
}

// sendStages are the stages of a send, in the order a send meets them.
var sendStages = []stage{
	{"admission_webhooks", "apiserver", "apiserver_admission_webhook_admission_duration_seconds", nil},
	{"api_create", "apiserver", "apiserver_request_duration_seconds", map[string]string{"resource": "sessionsends", "verb": "POST"}},
	{"queue_wait", "manager", "workqueue_queue_duration_seconds", map[string]string{"name": "sessionsend"}},
	{"reconcile", "manager", "controller_runtime_reconcile_time_seconds", map[string]string{"controller": "sessionsend"}},
	{"turn", "manager", "agent_sessions_turn_duration_seconds", nil},
	// The controller's one status write: a merge patch with the optimistic lock.
	{"api_status_update", "apiserver", "apiserver_request_duration_seconds", map[string]string{"resource": "sessionsends", "verb": "PUT", "subresource": "status"}},
}

// nullStages are the API server's share of a null object: its create and status update.
var nullStages = []stage{
	{"api_create", "apiserver", "apiserver_request_duration_seconds", map[string]string{"resource": "nulls", "verb": "POST"}},
	{"api_status_update", "apiserver", "apiserver_request_duration_seconds", map[string]string{"resource": "nulls", "verb": "PUT", "subresource": "status"}},
}

// stageTotals is the sum and count of every sendStage's histogram at one moment.
type stageTotals map[string][2]float64

func readStages(ctx context.Context, cfg *rest.Config, c *devcluster.Cluster, stages []stage) (stageTotals, error) {
	api, err := apiMetrics(ctx, cfg)
	if err != nil {
		return nil, err
	}
	mgr, err := managerMetrics(ctx, c.MetricsAddr, c.Token)
	if err != nil {
		return nil, err
	}
	out := stageTotals{}
	for _, s := range stages {
		fams := api
		if s.source == "manager" {
			fams = mgr
		}
		var sum, count float64
		for _, m := range fams[s.family].GetMetric() {
			if matches(m, s.labels) {
				sum += m.GetHistogram().GetSampleSum()
				count += float64(m.GetHistogram().GetSampleCount())
			}
		}
		out[s.figure] = [2]float64{sum, count}
	}
	return out, nil
}

// stageFigures are the milliseconds and the observations per send of each stage between two
// readings.
func stageFigures(prefix string, stages []stage, before, after stageTotals, sends int) []Figure {
	var figs []Figure
	for _, s := range stages {
		b, a := before[s.figure], after[s.figure]
		figs = append(figs,
			Figure{Name: prefix + s.figure + "_ms", Value: (a[0] - b[0]) * 1000 / float64(sends), Unit: "ms",
				Target: "per send, from " + s.source + " " + s.family},
			Figure{Name: prefix + s.figure + "_per_send", Value: (a[1] - b[1]) / float64(sends), Unit: "observations"})
	}
	return figs
}

func matches(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok {
			if v != l.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(want)
}

func apiMetrics(ctx context.Context, cfg *rest.Config) (map[string]*dto.MetricFamily, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	raw, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	return parseMetrics(strings.NewReader(string(raw)))
}

func managerMetrics(ctx context.Context, addr, token string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the local manager's self-signed certificate
	resp, err := insecure.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return parseMetrics(resp.Body)
}

func parseMetrics(r io.Reader) (map[string]*dto.MetricFamily, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(r)
}

// window is a measured window's stage and request counters at its start.
type window struct {
	cfg    *rest.Config
	c      *devcluster.Cluster
	stages []stage
	st     stageTotals
	req    requestCounts
}

// openWindow reads stages' totals and the API server's requests before a window.
func openWindow(ctx context.Context, cfg *rest.Config, c *devcluster.Cluster, stages []stage) (*window, error) {
	st, err := readStages(ctx, cfg, c, stages)
	if err != nil {
		return nil, err
	}
	req, err := readRequests(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &window{cfg: cfg, c: c, stages: stages, st: st, req: req}, nil
}

// close reads them again and returns the stage figures (stagePrefix) and the requests by
// verb and resource (reqPrefix), per object of the window's n.
func (w *window) close(ctx context.Context, stagePrefix, reqPrefix string, n int) ([]Figure, error) {
	st, err := readStages(ctx, w.cfg, w.c, w.stages)
	if err != nil {
		return nil, err
	}
	req, err := readRequests(ctx, w.cfg)
	if err != nil {
		return nil, err
	}
	return append(stageFigures(stagePrefix, w.stages, w.st, st, n), requestFigures(reqPrefix, w.req, req, n)...), nil
}
