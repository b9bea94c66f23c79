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

package policy

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// StarterMark is a label naming what started a send (sessionsv1alpha1.ScheduleLabel, sessionsv1alpha1.HookLabel) that
// a write sets, changes or removes. The transcript's provenance (cron, hook) and a
// schedule's concurrency policy read these labels, so only the part of the operator that
// creates such sends writes them: the manager for a schedule's tick, the transcript-store
// (the verb deliver on the hook) for a hook's delivery.
type StarterMark struct {
	// Label is sessionsv1alpha1.ScheduleLabel or sessionsv1alpha1.HookLabel.
	Label string
	// Name is the SessionSchedule or SessionHook the label names after the write, or before
	// it when the write removes the label.
	Name string
}

// starterLabels are the labels of StarterMark, in the order they are judged.
var starterLabels = [...]string{sessionsv1alpha1.ScheduleLabel, sessionsv1alpha1.HookLabel}

// StarterMarks lists the starter labels that a write from old (nil on create) to cur sets,
// changes or removes.
func StarterMarks(old, cur map[string]string) []StarterMark {
	var out []StarterMark
	for _, l := range starterLabels {
		if !MarkWritten(old, cur, l) {
			continue
		}
		name, has := cur[l]
		if !has {
			name = old[l]
		}
		out = append(out, StarterMark{Label: l, Name: name})
	}
	return out
}

// MarkWritten says whether a write from old (nil on create) to cur sets, changes or removes
// the label or annotation key: the operator's marks (these labels, the chain's) are judged by
// who writes them.
func MarkWritten(old, cur map[string]string, key string) bool {
	was, had := old[key]
	now, has := cur[key]
	return had != has || was != now
}

// StarterMarkDenial is the refusal of m to a user who does not create such sends.
func StarterMarkDenial(m StarterMark) *field.Error {
	path := field.NewPath("metadata", "labels").Key(m.Label)
	if m.Label == sessionsv1alpha1.HookLabel {
		return field.Forbidden(path, "only the operator's hook door sets it (the transcript-store, granted the verb "+sessionsv1alpha1.VerbDeliver+
			" on sessionhooks), on the sends of a SessionHook's deliveries: remove it, and the send is an ordinary one")
	}
	return field.Forbidden(path, "only the operator's schedule controller sets it, on the sends of a SessionSchedule's ticks: remove it, and the send is an ordinary one")
}
