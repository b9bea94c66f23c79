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
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestNewListParams(t *testing.T) {
	cases := map[string]struct {
		limit, active, messages int64
		want                    ListParams
		wantErr                 string
	}{
		"defaults":                  {limit: DefaultListLimit, want: ListParams{Limit: 50}},
		"limit clamps to 200":       {limit: 5000, want: ListParams{Limit: 200}},
		"limit at least 1":          {limit: -3, want: ListParams{Limit: 1}},
		"messages up to 20":         {limit: 10, messages: 20, want: ListParams{Limit: 10, MessageLimit: 20}},
		"messages above 20 refused": {limit: 10, messages: 99, wantErr: "messageLimit 99 is out of range: 0 to 20 messages per session"},
		"negative messages refused": {limit: 10, messages: -1, wantErr: "messageLimit -1 is out of range: 0 to 20 messages per session"},
		"negative active":           {limit: 10, active: -5, want: ListParams{Limit: 10}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := NewListParams(nil, tc.limit, tc.active, tc.messages)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Errorf("err = %v, want one starting %q", err, tc.wantErr)
				}
				return
			}
			if diff := cmp.Diff(tc.want, got); err != nil || diff != "" {
				t.Errorf("err %v; (-want +got):\n%s", err, diff)
			}
		})
	}
}

// A row's deliveryContext is the seeds' { channel, to, accountId }: the session's own, its
// channel and to taken from lastChannel and lastTo when it sets none.
func TestRowDeliveryContext(t *testing.T) {
	cases := map[string]struct {
		spec sessionsv1alpha1.AgentSessionSpec
		want *DeliveryContext
	}{
		"none known": {},
		"from lastChannel and lastTo": {spec: sessionsv1alpha1.AgentSessionSpec{LastChannel: "telegram", LastTo: "42"},
			want: &DeliveryContext{Channel: "telegram", To: "42"}},
		"the session's own wins": {spec: sessionsv1alpha1.AgentSessionSpec{LastChannel: "telegram", LastTo: "42",
			DeliveryContext: &sessionsv1alpha1.DeliveryContext{Channel: "discord", To: "c1", AccountID: "bot", ThreadID: "t9"}},
			want: &DeliveryContext{Channel: "discord", To: "c1", AccountID: "bot"}},
		"an account alone, the rest from last": {spec: sessionsv1alpha1.AgentSessionSpec{LastChannel: "slack", LastTo: "C1",
			DeliveryContext: &sessionsv1alpha1.DeliveryContext{AccountID: "bot"}},
			want: &DeliveryContext{Channel: "slack", To: "C1", AccountID: "bot"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := &sessionsv1alpha1.AgentSession{Spec: tc.spec}
			s.Spec.Key = "agent:main:main"
			if diff := cmp.Diff(tc.want, RowOf(s).DeliveryContext); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestListRows(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	at := func(minutesAgo int) *metav1.Time {
		t := metav1.NewTime(now.Add(-time.Duration(minutesAgo) * time.Minute))
		return &t
	}
	sess := func(key string, kind sessionsv1alpha1.SessionKind, updated *metav1.Time, mut ...func(*sessionsv1alpha1.AgentSession)) sessionsv1alpha1.AgentSession {
		s := sessionsv1alpha1.AgentSession{Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "main"},
			Status: sessionsv1alpha1.AgentSessionStatus{Kind: kind, UpdatedAt: updated, Channel: "webchat", SessionID: "id-" + key}}
		for _, m := range mut {
			m(&s)
		}
		return s
	}
	all := []sessionsv1alpha1.AgentSession{
		sess("agent:main:main", "main", at(1)),
		sess("agent:main:webchat:group:g", "group", at(30)),
		sess("cron:nightly", "cron", at(120)),
		sess("global", "other", at(0)),
		sess("unknown", "other", at(0)),
		sess("agent:main:subagent:x", "other", at(5), func(s *sessionsv1alpha1.AgentSession) { s.Status.Phase = sessionsv1alpha1.SessionArchived }),
		sess("hook:h1", "hook", at(10), func(s *sessionsv1alpha1.AgentSession) { s.Spec.SendPolicy = sessionsv1alpha1.ActionDeny }),
		sess("agent:ops:webchat:group:deploys", "group", at(40), func(s *sessionsv1alpha1.AgentSession) {
			s.Spec.AgentID, s.Spec.Label, s.Spec.DisplayName = "ops", "deploys", "Release Train"
		}),
	}
	keys := func(rows []SessionRow) []string {
		var out []string
		for _, r := range rows {
			out = append(out, r.Key)
		}
		return out
	}
	cases := map[string]struct {
		p       ListParams
		visible func(*sessionsv1alpha1.AgentSession) bool
		want    []string
	}{
		"newest first; reserved and archived never listed": {p: ListParams{Limit: 50}, want: []string{"agent:main:main", "hook:h1", "agent:main:webchat:group:g", "agent:ops:webchat:group:deploys", "cron:nightly"}},
		"kinds filter":     {p: ListParams{Limit: 50, Kinds: []string{"group", "cron"}}, want: []string{"agent:main:webchat:group:g", "agent:ops:webchat:group:deploys", "cron:nightly"}},
		"label":            {p: ListParams{Limit: 50, Label: "deploys"}, want: []string{"agent:ops:webchat:group:deploys"}},
		"label is exact":   {p: ListParams{Limit: 50, Label: "deploy"}},
		"agentId":          {p: ListParams{Limit: 50, AgentID: "ops"}, want: []string{"agent:ops:webchat:group:deploys"}},
		"search key":       {p: ListParams{Limit: 50, Search: "NIGHT"}, want: []string{"cron:nightly"}},
		"search label":     {p: ListParams{Limit: 50, Search: "ploy"}, want: []string{"agent:ops:webchat:group:deploys"}},
		"search display":   {p: ListParams{Limit: 50, Search: "release train"}, want: []string{"agent:ops:webchat:group:deploys"}},
		"archived only":    {p: ListParams{Limit: 50, Archived: true}, want: []string{"agent:main:subagent:x"}},
		"active minutes":   {p: ListParams{Limit: 50, ActiveMinutes: 15}, want: []string{"agent:main:main", "hook:h1"}},
		"limit":            {p: ListParams{Limit: 2}, want: []string{"agent:main:main", "hook:h1"}},
		"visibility hides": {p: ListParams{Limit: 50}, visible: func(s *sessionsv1alpha1.AgentSession) bool { return s.Spec.Key == "cron:nightly" }, want: []string{"cron:nightly"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, keys(ListRows(Pointers(all), tc.p, now, tc.visible))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestRowShape pins the JSON of a row to the seeds' field names.
func TestRowShape(t *testing.T) {
	updated := metav1.NewTime(time.UnixMilli(1764000000000))
	s := sessionsv1alpha1.AgentSession{
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: "agent:main:discord:group:1", AgentID: "main", DisplayName: "#general",
			SendPolicy: "deny", LastChannel: "discord", LastTo: "u1", Model: "m", ThinkingLevel: "low", VerboseLevel: "on",
			DeliveryContext: &sessionsv1alpha1.DeliveryContext{Channel: "discord", To: "c1", AccountID: "a"}},
		Status: sessionsv1alpha1.AgentSessionStatus{Kind: "group", Channel: "discord", SessionID: "sid", UpdatedAt: &updated,
			ContextTokens: 10, TotalTokens: 20, SystemSent: true, AbortedLastRun: true, TranscriptPath: "/t/sid.jsonl"},
	}
	b, err := json.Marshal(RowOf(&s))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"key":"agent:main:discord:group:1","kind":"group","channel":"discord","displayName":"#general","updatedAt":1764000000000,` +
		`"sessionId":"sid","model":"m","contextTokens":10,"totalTokens":20,"thinkingLevel":"low","verboseLevel":"on","systemSent":true,` +
		`"abortedLastRun":true,"sendPolicy":"deny","lastChannel":"discord","lastTo":"u1","deliveryContext":{"channel":"discord","to":"c1","accountId":"a"},` +
		`"transcriptPath":"/t/sid.jsonl","agentId":"main"}`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("row JSON (-want +got):\n%s", diff)
	}
}

// newest keeps exactly what a full sort would put first, in the same order.
func TestNewestIsTheHeadOfAFullSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		n, limit := rng.IntN(300), 1+rng.IntN(60)
		items := make([]int, n)
		for i := range items {
			items[i] = rng.IntN(100) // duplicates on purpose
		}
		want := slices.Clone(items)
		slices.Sort(want)
		want = want[:min(n, limit)]
		if got := newest(slices.Clone(items), limit, func(a, b int) int { return a - b }); !slices.Equal(got, want) {
			t.Fatalf("newest(%v, %d) = %v, want %v", items, limit, got, want)
		}
	}
}
