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
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// requestCounts is apiserver_request_total summed by verb, resource and subresource
// (verb_resource[_subresource], lower case), every client and response code included.
type requestCounts map[string]float64

func readRequests(ctx context.Context, cfg *rest.Config) (requestCounts, error) {
	fams, err := apiMetrics(ctx, cfg)
	if err != nil {
		return nil, err
	}
	fam, ok := fams["apiserver_request_total"]
	if !ok {
		return nil, errors.New("apiserver_request_total not found in /metrics")
	}
	out := requestCounts{}
	for _, m := range fam.GetMetric() {
		l := labelsOf(m)
		verb, res, sub := l["verb"], l["resource"], l["subresource"]
		if res == "" { // /metrics, /healthz and the like
			continue
		}
		key := strings.ToLower(verb) + "_" + res
		if sub != "" {
			key += "_" + sub
		}
		out[key] += m.GetCounter().GetValue()
	}
	return out, nil
}

// minRequestsPerSend hides the background (leases, the bench's own metric reads) from the
// per-send breakdown.
const minRequestsPerSend = 0.05

// requestFigures are the API requests per object between two readings, by verb and
// resource: a GET, LIST or review per send that a cache could serve shows here.
func requestFigures(prefix string, before, after requestCounts, n int) []Figure {
	keys := make([]string, 0, len(after))
	for k := range after {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var figs []Figure
	for _, k := range keys {
		if v := (after[k] - before[k]) / float64(n); v >= minRequestsPerSend {
			figs = append(figs, Figure{Name: prefix + k, Value: v, Unit: "requests", Target: "per object, apiserver_request_total"})
		}
	}
	return figs
}

// watchers is apiserver_longrunning_requests of verb WATCH by resource at one moment.
func watchers(ctx context.Context, cfg *rest.Config) (map[string]float64, error) {
	fams, err := apiMetrics(ctx, cfg)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, m := range fams["apiserver_longrunning_requests"].GetMetric() {
		if l := labelsOf(m); l["verb"] == "WATCH" {
			out[l["resource"]] += m.GetGauge().GetValue()
		}
	}
	return out, nil
}

// objectBytes is the JSON size of gvr's object name in the bench namespace as a client reads
// it (managed fields included), what every watch event of it carries and about what etcd
// stores, and how many managedFields entries it has (one per manager, operation and
// subresource that wrote it). With -profile-dir the object is saved there too.
func objectBytes(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, name string) (float64, int, error) {
	u, err := dyn.Resource(gvr).Namespace(sendNS).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return 0, 0, err
	}
	data, err := json.Marshal(u.Object)
	if err != nil {
		return 0, 0, err
	}
	if *profileDir != "" {
		if err := os.MkdirAll(*profileDir, 0o755); err == nil {
			_ = os.WriteFile(filepath.Join(*profileDir, gvr.Resource+".json"), data, 0o644)
		}
	}
	return float64(len(data)), len(u.GetManagedFields()), nil
}

// objectFigures are a finished send's and a null's size, a session's, and their watchers:
// the watch events the API server encodes per object.
func objectFigures(ctx context.Context, cfg *rest.Config, dyn dynamic.Interface) []Figure {
	var figs []Figure
	sends, err1 := dyn.Resource(sendGVR).Namespace(sendNS).List(ctx, metav1.ListOptions{Limit: 1})
	nulls, err2 := dyn.Resource(nullGVR).Namespace(sendNS).List(ctx, metav1.ListOptions{Limit: 1})
	if err1 == nil && err2 == nil && len(sends.Items) > 0 && len(nulls.Items) > 0 {
		sb, sm, err1 := objectBytes(ctx, dyn, sendGVR, sends.Items[0].GetName())
		nb, nm, err2 := objectBytes(ctx, dyn, nullGVR, nulls.Items[0].GetName())
		if err1 == nil && err2 == nil {
			figs = append(figs,
				Compare("send_bytes_per_finished", sb, nb, "bytes", "ratio <= 1.5: a finished send as clients read it, managed fields included; baseline: a null"),
				Compare("send_managed_fields_entries", float64(sm), float64(nm), "entries", "managedFields entries of a finished send: one per writer (the client's create, the controller's status); baseline: a null's"))
		}
	}
	if b, m, err := objectBytes(ctx, dyn, sessionGVR, sessionkey.ObjectName(targetKey(0))); err == nil {
		figs = append(figs,
			Figure{Name: "session_bytes", Value: b, Unit: "bytes", Target: "a session that took the c=1 sends, as clients read it, managed fields included"},
			Figure{Name: "session_managed_fields_entries", Value: float64(m), Unit: "entries", Target: "its managedFields entries: the client's create and the controller's status (no finalizer)"})
	}
	if w, err := watchers(ctx, cfg); err == nil {
		figs = append(figs, Compare("watchers", w["sessionsends"], w["nulls"], "watches", "open watches of sessionsends; baseline: of nulls"))
	}
	return figs
}

// labelsOf is a metric's labels by name.
func labelsOf(m *dto.Metric) map[string]string {
	out := make(map[string]string, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}
