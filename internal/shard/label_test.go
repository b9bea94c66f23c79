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

package shard

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// The label names the namespace's owner and the count; its own shard's selector matches it
// and no other shard's does; one shard stamps and selects nothing.
func TestStampAndSelect(t *testing.T) {
	for name, tc := range map[string]struct {
		shard  Shard
		ns     string
		before map[string]string
		want   map[string]string
		stamp  bool
	}{
		"unsharded":         {shard: Shard{0, 1}, ns: "team", want: nil},
		"new":               {shard: Shard{0, 2}, ns: "team", want: map[string]string{Label: Shard{Count: 2}.LabelOf("team")}, stamp: true},
		"other labels kept": {shard: Shard{1, 3}, ns: "x", before: map[string]string{"app": "a"}, want: map[string]string{"app": "a", Label: Shard{Count: 3}.LabelOf("x")}, stamp: true},
		"another count":     {shard: Shard{0, 2}, ns: "team", before: map[string]string{Label: "0-of-3"}, want: map[string]string{Label: Shard{Count: 2}.LabelOf("team")}, stamp: true},
		"already":           {shard: Shard{0, 2}, ns: "team", before: map[string]string{Label: Shard{Count: 2}.LabelOf("team")}, want: map[string]string{Label: Shard{Count: 2}.LabelOf("team")}},
	} {
		o := &metav1.ObjectMeta{Namespace: tc.ns, Labels: tc.before}
		if got := tc.shard.Stamp(o); got != tc.stamp {
			t.Errorf("%s: Stamp = %v, want %v", name, got, tc.stamp)
		}
		if diff := cmp.Diff(tc.want, o.Labels); diff != "" {
			t.Errorf("%s: labels (-want +got):\n%s", name, diff)
		}
	}
	if (Shard{0, 1}).Selector() != nil {
		t.Error("one shard selects by label")
	}
	o := &metav1.ObjectMeta{Namespace: "team"}
	Shard{Count: 4}.Stamp(o)
	for i := range 4 {
		s := Shard{i, 4}
		if got, want := s.Selector().Matches(labels.Set(o.Labels)), s.Owns("team"); got != want {
			t.Errorf("shard %s selects team's object: %v, owns team: %v", s, got, want)
		}
	}
}
