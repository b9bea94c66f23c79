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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestScaleLongPlanNormalized(t *testing.T) {
	cases := map[string]struct{ in, want scaleLongPlan }{
		"the default":                   {scaleLongDefault, scaleLongDefault},
		"the short run":                 {scaleLongShortPlan, scaleLongShortPlan},
		"counts cut to whole steps":     {scaleLongPlan{Live: 10500, Created: 301000, Step: 5000, ReadEvery: 1}, scaleLongPlan{Live: 10000, Created: 300000, Step: 5000, ReadEvery: 1}},
		"a step above the live set":     {scaleLongPlan{Live: 300, Created: 900, Step: 5000}, scaleLongPlan{Live: 300, Created: 900, Step: 300, ReadEvery: 300}},
		"fewer created than live grows": {scaleLongPlan{Live: 100, Created: 50, Step: 50, ReadEvery: 50}, scaleLongPlan{Live: 100, Created: 100, Step: 50, ReadEvery: 50}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(c.want, c.in.normalized()); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestScaleLongFiguresStateTheLastReadingAgainstTheFirst(t *testing.T) {
	plan := scaleLongPlan{Live: 10000, Created: 300000, Step: 5000}
	empty := controlPlaneReading{APIServerMiB: 400, EtcdMiB: 50, APIServerHeapMiB: 150}
	first := controlPlaneReading{Live: 10000, Created: 10000, APIServerMiB: 600, EtcdMiB: 110, EtcdDBMiB: 60, EtcdDBInUseMiB: 40, APIServerHeapMiB: 320, ManagerHeapMiB: 40}
	firstRestarted := controlPlaneReading{Live: 10000, Created: 10000, APIServerMiB: 480, APIServerHeapMiB: 210}
	last := controlPlaneReading{Live: 10000, Created: 300000, APIServerMiB: 660, EtcdMiB: 121, EtcdDBMiB: 200, EtcdDBInUseMiB: 44, ManagerHeapMiB: 42}
	lastRestarted := controlPlaneReading{Live: 10000, Created: 300000, APIServerMiB: 504, APIServerHeapMiB: 252}
	got := map[string][2]float64{}
	targets := map[string]string{}
	for _, f := range scaleLongFigures(plan, scaleLongReadings{empty: empty, first: first, last: last, firstRestarted: firstRestarted, lastRestarted: lastRestarted}) {
		r := 0.0
		if f.Ratio != nil {
			r = *f.Ratio
		}
		got[f.Name], targets[f.Name] = [2]float64{f.Value, r}, f.Target
	}
	want := map[string][2]float64{
		"scale_long_apiserver_rss_mib":             {660, 1.1},
		"scale_long_apiserver_rss_restarted_mib":   {504, 1.05},
		"scale_long_apiserver_heap_restarted_mib":  {252, 1.2},
		"scale_long_etcd_rss_mib":                  {121, 1.1},
		"scale_long_etcd_db_in_use_mib":            {44, 1.1},
		"scale_long_etcd_db_mib":                   {200, 200.0 / 60},
		"scale_long_manager_rss_mib":               {0, 0},
		"scale_long_manager_heap_mib":              {42, 1.05},
		"scale_long_transcript_store_rss_mib":      {0, 0},
		"apiserver_rss_per_10k_sessions_mib":       {200, 0},
		"apiserver_heap_per_10k_sessions_mib":      {170, 0},
		"apiserver_rss_per_10k_live_sessions_mib":  {80, 0},
		"apiserver_heap_per_10k_live_sessions_mib": {60, 0},
		"etcd_rss_per_10k_sessions_mib":            {60, 0},
	}
	if d := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 })); d != "" {
		t.Errorf("figures (-want +got):\n%s", d)
	}
	if want := "ratio <= 1.15: at 10k live / 300k created; baseline: at 10k live / 10k created"; targets["scale_long_apiserver_rss_mib"] != want {
		t.Errorf("target %q, want %q", targets["scale_long_apiserver_rss_mib"], want)
	}
}

// TestScaleLongShort runs the suite unit-sized on a real control plane with the manager and
// the transcript-store: sessions created and spawned, archived by their controller, deleted by the
// SessionPolicy retention, the live set held, and every figure read.
func TestScaleLongShort(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane, the manager and the transcript-store")
	}
	*scaleLongShort = true
	defer func() { *scaleLongShort = false }()
	figs, err := benchScaleLong()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range figs {
		seen[f.Name] = true
		// A slope per 10k read over 40 sessions is noise either way (the heap after a GC can
		// read below the empty one); the unit-sized run checks only that it is read.
		if f.Value <= 0 && !strings.Contains(f.Name, "_per_10k_") {
			t.Errorf("%s = %v, want a reading", f.Name, f.Value)
		}
	}
	for _, name := range []string{"scale_long_apiserver_rss_mib", "scale_long_apiserver_rss_restarted_mib", "scale_long_etcd_rss_mib", "scale_long_etcd_db_mib", "apiserver_rss_per_10k_sessions_mib"} {
		if !seen[name] {
			t.Errorf("no figure %s in %v", name, seen)
		}
	}
}
