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
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// ring runs a loop of agents that each call the next one across the wire, every hop
// carrying what NextCarried makes of the one before, and returns how many sends the chain
// made (the person's root included) when JudgeCarried stopped it, and the limit.
func ring(p *sessionsv1alpha1.SessionPolicySpec, agents ...string) (int, string) {
	now := time.Date(2026, 11, 29, 5, 0, 0, 0, time.UTC)
	var in *CarriedChain
	sends := 1 // the person's send to the first agent
	for i := 0; i < 1000; i++ {
		from, to := agents[i%len(agents)], agents[(i+1)%len(agents)]
		next := NextCarried(in, "root-uid", i+1, "team/agent:"+from+":main", "https://"+to+"/a2a/team/"+to, nil, nil)
		if d := JudgeCarried(next, p, now); d != nil {
			return sends, d.Limit
		}
		// Through the wire: what arrives is what was encoded.
		got, err := ParseCarried([]byte(next.Encode()))
		if err != nil {
			panic(err)
		}
		in, sends = got, sends+1
	}
	return sends, "none"
}

// TestRingAcrossTheWire: loops that cross the wire stop at the same lap as in one cluster
// (storm_test's figures: a pair at 5 sends, a triangle at 7), at maxSendsPerChain and at
// maxHops when the pair limit is raised.
func TestRingAcrossTheWire(t *testing.T) {
	limits := func(l sessionsv1alpha1.ChainLimits) *sessionsv1alpha1.SessionPolicySpec {
		return &sessionsv1alpha1.SessionPolicySpec{Limits: &l}
	}
	type result struct {
		Sends int
		Limit string
	}
	cases := map[string]struct {
		p      *sessionsv1alpha1.SessionPolicySpec
		agents []string
		want   result
	}{
		"pair, defaults":     {agents: []string{"a", "b"}, want: result{5, LimitMaxPairRepeats}},
		"triangle, defaults": {agents: []string{"a", "b", "c"}, want: result{7, LimitMaxPairRepeats}},
		"pair, pairs raised": {p: limits(sessionsv1alpha1.ChainLimits{MaxPairRepeats: ptr.To[int32](1000)}),
			agents: []string{"a", "b"}, want: result{9, LimitMaxHops}},
		"pair, pairs and hops raised": {p: limits(sessionsv1alpha1.ChainLimits{MaxPairRepeats: ptr.To[int32](1000), MaxHops: ptr.To[int32](64)}),
			agents: []string{"a", "b"}, want: result{20, LimitMaxSendsPerChain}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sends, limit := ring(tc.p, tc.agents...)
			if diff := cmp.Diff(tc.want, result{sends, limit}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestJudgeCarried(t *testing.T) {
	now := time.Date(2026, 11, 29, 5, 0, 0, 0, time.UTC)
	past, future := now.Add(-time.Second), now.Add(time.Minute)
	cases := map[string]struct {
		c         *CarriedChain
		wantLimit string
	}{
		"none":              {},
		"first hop":         {c: &CarriedChain{ID: "x", Hops: 1, Sends: 1, Visited: []string{"0000000000000001"}}},
		"over maxHops":      {c: &CarriedChain{ID: "x", Hops: 9, Sends: 9}, wantLimit: LimitMaxHops},
		"chain full":        {c: &CarriedChain{ID: "x", Hops: 2, Sends: 20}, wantLimit: LimitMaxSendsPerChain},
		"deadline passed":   {c: &CarriedChain{ID: "x", Hops: 1, Sends: 1, Deadline: &past}, wantLimit: LimitDeadline},
		"deadline ahead":    {c: &CarriedChain{ID: "x", Hops: 1, Sends: 1, Deadline: &future}},
		"no turn left":      {c: &CarriedChain{ID: "x", Hops: 1, Sends: 1, Budget: &sessionsv1alpha1.Budget{MaxTurns: ptr.To[int32](0)}}, wantLimit: LimitCarriedBudget},
		"no cost left":      {c: &CarriedChain{ID: "x", Hops: 1, Sends: 1, Budget: &sessionsv1alpha1.Budget{MaxCost: "0"}}, wantLimit: LimitCarriedBudget},
		"budget left":       {c: &CarriedChain{ID: "x", Hops: 1, Sends: 1, Budget: &sessionsv1alpha1.Budget{MaxTurns: ptr.To[int32](1), MaxCost: "0.01"}}},
		"pair seen once":    {c: &CarriedChain{ID: "x", Hops: 3, Sends: 3, Visited: []string{"000000000000000a", "000000000000000b", "000000000000000a"}}},
		"pair seen twice":   {c: &CarriedChain{ID: "x", Hops: 5, Sends: 5, Visited: []string{"000000000000000a", "000000000000000b", "000000000000000a", "000000000000000b", "000000000000000a"}}, wantLimit: LimitMaxPairRepeats},
		"other pairs twice": {c: &CarriedChain{ID: "x", Hops: 5, Sends: 5, Visited: []string{"000000000000000a", "000000000000000b", "000000000000000a", "000000000000000b", "000000000000000c"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := JudgeCarried(tc.c, nil, now)
			got := ""
			if d != nil {
				got = d.Limit
				if !strings.Contains(d.Message, "crossed the wire") {
					t.Errorf("the refusal does not say the chain crossed the wire: %s", d.Message)
				}
			}
			if got != tc.wantLimit {
				t.Errorf("limit %q, want %q (%v)", got, tc.wantLimit, d)
			}
		})
	}
}

// TestNextCarried: a chain carried in goes on one hop, send and pair further, with the
// budget the caller narrowed and the earlier deadline; a chain that begins here starts at
// the owner's hop.
func TestNextCarried(t *testing.T) {
	t1 := time.Date(2026, 11, 29, 5, 0, 0, 0, time.UTC)
	t2 := t1.Add(time.Hour)
	ours := &sessionsv1alpha1.Budget{MaxTurns: ptr.To[int32](3), MaxCost: "0.5"}
	cases := map[string]struct {
		in       *CarriedChain
		hops     int
		budget   *sessionsv1alpha1.Budget
		deadline *time.Time
		want     *CarriedChain
	}{
		"a chain begins here": {hops: 1, budget: ours, deadline: &t1,
			want: &CarriedChain{ID: "here", Hops: 1, Sends: 1, Visited: []string{PairHash("here", "from", "to")}, Budget: ours, Deadline: &t1}},
		"a chain in the cluster goes on over the wire": {hops: 3,
			want: &CarriedChain{ID: "here", Hops: 3, Sends: 3, Visited: []string{PairHash("here", "from", "to")}}},
		"a carried chain goes on from its own hop and sends, root and seal; a later deadline gives way": {
			in:   &CarriedChain{ID: "there", Hops: 2, Sends: 4, Deadline: &t2, Root: "SessionSend/seed", Seal: "0123456789abcdef0123456789abcdef"},
			hops: 1, budget: ours, deadline: &t1,
			want: &CarriedChain{ID: "there", Hops: 3, Sends: 5, Visited: []string{PairHash("there", "from", "to")},
				Budget: ours, Deadline: &t1, Root: "SessionSend/seed", Seal: "0123456789abcdef0123456789abcdef"}},
		"an earlier carried deadline stays": {in: &CarriedChain{ID: "there", Hops: 1, Sends: 1, Deadline: &t1}, hops: 1, deadline: &t2,
			want: &CarriedChain{ID: "there", Hops: 2, Sends: 2, Visited: []string{PairHash("there", "from", "to")}, Deadline: &t1}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := NextCarried(tc.in, "here", tc.hops, "from", "to", tc.budget, tc.deadline)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestNextCarriedKeepsTheNewestPairs(t *testing.T) {
	var c *CarriedChain
	for i := range MaxCarriedVisited + 5 {
		c = NextCarried(c, "x", i+1, "from", strings.Repeat("t", i), nil, nil)
	}
	if len(c.Visited) != MaxCarriedVisited || c.Visited[len(c.Visited)-1] != PairHash("x", "from", strings.Repeat("t", MaxCarriedVisited+4)) {
		t.Errorf("visited %d pairs ending %s, want the newest %d", len(c.Visited), c.Visited[len(c.Visited)-1], MaxCarriedVisited)
	}
	if _, err := ParseCarried([]byte(c.Encode())); err != nil {
		t.Errorf("a full chain does not read back: %v", err)
	}
}

func TestParseCarried(t *testing.T) {
	cases := map[string]string{
		"not JSON":          `{`,
		"no id":             `{"hops":1,"sends":1}`,
		"id with a slash":   `{"id":"a/b","hops":1,"sends":1}`,
		"hops zero":         `{"id":"a","hops":0,"sends":1}`,
		"sends zero":        `{"id":"a","hops":1,"sends":0}`,
		"pair not hex":      `{"id":"a","hops":1,"sends":1,"visited":["zzzzzzzzzzzzzzzz"]}`,
		"negative turns":    `{"id":"a","hops":1,"sends":1,"budget":{"maxTurns":-1}}`,
		"cost not decimal":  `{"id":"a","hops":1,"sends":1,"budget":{"maxCost":"1e9"}}`,
		"root of any kind":  `{"id":"a","hops":1,"sends":1,"root":"Secret/x"}`,
		"too large":         `{"id":"a","hops":1,"sends":1,"pad":"` + strings.Repeat("x", MaxCarriedBytes) + `"}`,
		"too many pairs":    `{"id":"a","hops":1,"sends":1,"visited":[` + strings.TrimSuffix(strings.Repeat(`"0000000000000000",`, MaxCarriedVisited+1), ",") + `]}`,
		"hops out of range": `{"id":"a","hops":100000,"sends":1}`,
	}
	for name, raw := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseCarried([]byte(raw)); err == nil {
				t.Errorf("ParseCarried(%s) took it", raw)
			}
		})
	}
	ok := `{"id":"0f1e-uid","hops":2,"sends":3,"visited":["0123456789abcdef"],"budget":{"maxCost":"0.25","maxTurns":2},"deadline":"2026-11-29T05:00:00Z","root":"SessionSend/seed"}`
	c, err := ParseCarried([]byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	if back, err := ParseCarried([]byte(c.Encode())); err != nil || !cmp.Equal(c, back) {
		t.Errorf("encode and parse again: %v %s", err, cmp.Diff(c, back))
	}
}

func FuzzParseCarried(f *testing.F) {
	f.Add([]byte(`{"id":"0f1e-uid","hops":2,"sends":3,"visited":["0123456789abcdef"],"budget":{"maxCost":"0.25","maxTurns":2},"deadline":"2026-11-29T05:00:00Z","root":"SessionSend/seed"}`))
	f.Add([]byte(`{"id":"a","hops":1,"sends":1}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := ParseCarried(raw)
		if err != nil {
			return
		}
		// What was taken encodes within the bounds and reads back the same.
		enc := c.Encode()
		back, err := ParseCarried([]byte(enc))
		if err != nil {
			t.Fatalf("%s does not read back: %v", enc, err)
		}
		if back.Encode() != enc {
			t.Fatalf("read back as %s, was %s", back.Encode(), enc)
		}
		_ = JudgeCarried(c, nil, time.Unix(0, 0))
	})
}

// FuzzCarriedFromValue: a chain read from a value an SDK decoded (a map, read directly) is
// the chain, or the refusal, that parsing its encoding gives.
func FuzzCarriedFromValue(f *testing.F) {
	f.Add([]byte(`{"id":"0f1e-uid","hops":2,"sends":3,"visited":["0123456789abcdef"],"budget":{"maxCost":"0.25","maxTurns":2,"maxTokens":90000},"deadline":"2026-11-29T05:00:00.5Z","root":"SessionSend/seed","seal":"0123456789abcdef0123456789abcdef"}`))
	f.Add([]byte(`{"id":"a","hops":1,"sends":1,"budget":null,"visited":null}`))
	f.Add([]byte(`{"ID":"a","hops":1.5,"sends":1e2,"extra":[1]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var v any
		if json.Unmarshal(raw, &v) != nil {
			return
		}
		if _, ok := v.(map[string]any); !ok {
			return
		}
		direct, derr := CarriedFromValue(v)
		reencoded, _ := json.Marshal(v)
		parsed, perr := ParseCarried(reencoded)
		if (derr == nil) != (perr == nil) {
			t.Fatalf("%s: read directly %v, parsed %v", raw, derr, perr)
		}
		if derr == nil && direct.Encode() != parsed.Encode() {
			t.Fatalf("%s: read directly as %s, parsed as %s", raw, direct.Encode(), parsed.Encode())
		}
	})
}

func TestDoorSendLimits(t *testing.T) {
	got := DoorSendLimits(&sessionsv1alpha1.SessionPolicySpec{Limits: &sessionsv1alpha1.ChainLimits{DoorSendsPerCaller: ptr.To[int32](7),
		DoorSendWindow: &metav1.Duration{Duration: 5 * time.Minute}}})
	if want := (DoorLimits{PerSession: DefaultDoorSendsPerSession, PerCaller: 7, Window: 5 * time.Minute}); got != want {
		t.Errorf("DoorSendLimits = %+v, want %+v", got, want)
	}
	if d := JudgeDoorSend(2, 7, got); d == nil || d.Limit != LimitDoorSendsPerCaller || !strings.Contains(d.Message, "spec.limits.doorSendsPerCaller is 7") {
		t.Errorf("JudgeDoorSend at the caller's limit = %+v", d)
	}
	if d := JudgeDoorSend(9, 6, got); d != nil {
		t.Errorf("JudgeDoorSend under both limits = %+v", d)
	}
}

func TestCarriedRefusalLimit(t *testing.T) {
	now := time.Date(2026, 11, 29, 5, 0, 0, 0, time.UTC)
	for _, c := range []*CarriedChain{
		{ID: "x", Hops: 9, Sends: 9},
		{ID: "x", Hops: 2, Sends: 20},
		{ID: "x", Hops: 5, Sends: 5, Visited: []string{"000000000000000a", "000000000000000b", "000000000000000a", "000000000000000b", "000000000000000a"}},
		{ID: "x", Hops: 1, Sends: 1, Deadline: &now},
		{ID: "x", Hops: 1, Sends: 1, Budget: &sessionsv1alpha1.Budget{MaxTurns: ptr.To[int32](0)}},
	} {
		d := JudgeCarried(c, nil, now)
		// As a server's tool result or the API server's refusal quotes it.
		if got := CarriedRefusalLimit(`admission webhook denied the request: ` + d.Message); got != d.Limit {
			t.Errorf("the refusal %q names %q, want %q", d.Message, got, d.Limit)
		}
	}
	if got := CarriedRefusalLimit("chain limit reached: (SessionPolicy spec.limits.maxHops is 8)"); got != "" {
		t.Errorf("a refusal of a chain that stayed home names %q", got)
	}
}

// TestRefusedLimit: a refusal mark survives the wire (as JSON) and names a known limit only.
func TestRefusedLimit(t *testing.T) {
	marked := func(limit string) json.RawMessage {
		b, err := json.Marshal(RefusalMeta(limit))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cases := map[string]struct {
		in   any
		want string
	}{
		"our mark, raw":             {marked(LimitMaxPairRepeats), LimitMaxPairRepeats},
		"our mark, decoded":         {map[string]any{"refused": map[string]any{"limit": "maxHops"}}, LimitMaxHops},
		"our mark, as built":        {RefusalMeta(LimitCarriedBudget), LimitCarriedBudget},
		"nothing":                   {nil, ""},
		"a chain, not a refusal":    {json.RawMessage(`{"id":"x","hops":2}`), ""},
		"a limit nobody knows":      {json.RawMessage(`{"refused":{"limit":"everything"}}`), ""},
		"not JSON":                  {json.RawMessage(`{"refused":`), ""},
		"too long to be ours":       {json.RawMessage(`{"refused":{"limit":"maxHops"},"pad":"` + strings.Repeat("x", 2000) + `"}`), ""},
		"text that names the limit": {"chain limit reached: (SessionPolicy spec.limits.maxHops is 8)", ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := RefusedLimit(tc.in); got != tc.want {
				t.Errorf("RefusedLimit = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRootSealed: only the server holding the key believes the root a chain names; a
// caller that copies a chain's id and root with another seal, or none, is not believed.
func TestRootSealed(t *testing.T) {
	key, other := []byte("this manager's key"), []byte("another key")
	sealed := &CarriedChain{ID: "uid-1", Hops: 1, Sends: 1, Root: "SessionSend/seed", Seal: SealRoot(key, "uid-1", "SessionSend/seed")}
	cases := map[string]struct {
		key  []byte
		c    *CarriedChain
		want bool
	}{
		"sealed here":          {key: key, c: sealed, want: true},
		"sealed elsewhere":     {key: other, c: sealed},
		"no seal":              {key: key, c: &CarriedChain{ID: "uid-1", Root: "SessionSend/seed"}},
		"the seal of another":  {key: key, c: &CarriedChain{ID: "uid-2", Root: "SessionSend/seed", Seal: sealed.Seal}},
		"another root, sealed": {key: key, c: &CarriedChain{ID: "uid-1", Root: "SessionSend/other", Seal: sealed.Seal}},
		"none":                 {key: key},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := RootSealed(tc.key, tc.c); got != tc.want {
				t.Errorf("RootSealed = %v, want %v", got, tc.want)
			}
		})
	}
}
