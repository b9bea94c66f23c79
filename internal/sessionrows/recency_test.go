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

package sessionrows

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// Fed the informer's adds, updates and deletes, Recency pages exactly what ListRows computes
// over the namespace's sessions, for every filter.
func TestPageRowsOverRecencyIsListRows(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(1, 2))
	kinds := []sessionsv1alpha1.SessionKind{"main", "group", "cron", ""}
	session := func(ns string, i int) *sessionsv1alpha1.AgentSession {
		key := "agent:a" + strconv.Itoa(i%7) + ":webchat:group:g" + strconv.Itoa(i)
		switch {
		case i%29 == 0:
			key = "global" // reserved: never listed
		case i%13 == 0:
			key = "agent:m" + strconv.Itoa(i) + ":main"
		}
		s := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s" + strconv.Itoa(i),
			CreationTimestamp: metav1.NewTime(now.Add(-time.Duration(rng.IntN(600)) * time.Minute))},
			Spec:   sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "a"},
			Status: sessionsv1alpha1.AgentSessionStatus{Kind: kinds[rng.IntN(len(kinds))]}}
		if rng.IntN(4) > 0 { // many share an update time: the key orders them
			u := metav1.NewTime(now.Add(-time.Duration(rng.IntN(120)) * time.Minute))
			s.Status.UpdatedAt = &u
		}
		if rng.IntN(10) == 0 {
			s.Status.Phase = sessionsv1alpha1.SessionArchived
		}
		return s
	}
	r := NewRecency()
	h := r.Handler()
	live := map[string]*sessionsv1alpha1.AgentSession{}
	for i := range 3000 {
		ns := []string{"team", "other"}[i%2]
		s := session(ns, rng.IntN(1500))
		switch old, ok := live[ns+"/"+s.Name]; {
		case ok && rng.IntN(5) == 0:
			if rng.IntN(2) == 0 {
				h.OnDelete(old)
			} else {
				h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: ns + "/" + s.Name, Obj: old})
			}
			delete(live, ns+"/"+s.Name)
		case ok:
			h.OnUpdate(old, s)
			live[ns+"/"+s.Name] = s
		default:
			h.OnAdd(s, false)
			live[ns+"/"+s.Name] = s
		}
	}
	var team []*sessionsv1alpha1.AgentSession
	for _, s := range live {
		if s.Namespace == "team" {
			team = append(team, s)
		}
	}
	odd := func(s *sessionsv1alpha1.AgentSession) bool { return len(s.Spec.Key)%2 == 1 }
	for name, tc := range map[string]struct {
		p       ListParams
		visible func(*sessionsv1alpha1.AgentSession) bool
	}{
		"first page":          {p: mustParams(NewListParams(nil, 50, 0, 0))},
		"the largest page":    {p: mustParams(NewListParams(nil, MaxListLimit, 0, 0))},
		"kinds":               {p: mustParams(NewListParams([]string{"group", "cron"}, 50, 0, 0))},
		"active minutes":      {p: mustParams(NewListParams(nil, MaxListLimit, 30, 0))},
		"visibility":          {p: mustParams(NewListParams(nil, 50, 0, 0)), visible: odd},
		"everything filtered": {p: mustParams(NewListParams([]string{"node"}, 50, 0, 0))},
	} {
		t.Run(name, func(t *testing.T) {
			want := ListRows(team, tc.p, now, tc.visible)
			got := PageRows(func(y func(*sessionsv1alpha1.AgentSession) bool) { r.Newest("team", y) }, tc.p, now, tc.visible)
			if len(want) == 0 && name != "everything filtered" {
				t.Fatal("the fixture lists nothing: the comparison would prove nothing")
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("PageRows differs from ListRows (-want +got):\n%s", diff)
			}
		})
	}
	r.Newest("nobody", func(*sessionsv1alpha1.AgentSession) bool {
		t.Fatal("a namespace without sessions yielded one")
		return false
	})
}

func mustParams(p ListParams, err error) ListParams {
	if err != nil {
		panic(err)
	}
	return p
}
