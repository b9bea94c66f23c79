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

package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/devcluster"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// The workload and the faults; CHAOS_* variables scale them.
var (
	chaosSends    = envInt("CHAOS_SENDS", 200)
	chaosSpawns   = envInt("CHAOS_SPAWNS", 20)
	managerKills  = envInt("CHAOS_MANAGER_KILLS", 30)
	storeKills    = envInt("CHAOS_STORE_KILLS", 5)
	apiRestarts   = envInt("CHAOS_APISERVER_RESTARTS", 1)
	chaosSessions = 10 // target sessions, each with its own requester
)

// settleTimeout bounds how long the work may take to end after the last fault: past it,
// something hangs.
const settleTimeout = 10 * time.Minute

// crashes runs sends with reply-back (two ping-pong turns) and spawns while the manager and
// the transcript-store are SIGKILLed and restarted, and kube-apiserver is restarted, at
// random moments. Afterwards every send and run has ended as it would have without the
// faults, each transcript holds each message once, and each announce reached the sink.
func (e *env) crashes(t *testing.T) {
	ns := e.namespace(t, "chaos")
	sink := newSink(t)
	e.crashFixtures(t, ns, sink.URL)

	seed := uint64(time.Now().UnixNano())
	if s, err := strconv.ParseUint(os.Getenv("CHAOS_SEED"), 10, 64); err == nil {
		seed = s
	}
	t.Logf("seed %d (CHAOS_SEED repeats a run's fault schedule)", seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	var wg sync.WaitGroup
	objs := crashWorkload(ns)
	wg.Go(func() { e.createAll(t, objs) })
	faults := faultPlan(rng)
	gaps := make([]time.Duration, len(faults))
	for i := range gaps {
		gaps[i] = time.Duration(300+rng.IntN(1700)) * time.Millisecond
	}
	wg.Go(func() { e.inject(t, faults, gaps) })
	wg.Wait()

	sends, runs := e.waitTerminal(t, ns, chaosSends, chaosSpawns)
	e.checkSpend(t, ns)

	// Every send ran its three turns and delivered its announce; every run succeeded and
	// announced back.
	announced := map[string]string{} // idempotency key -> message
	for _, s := range sends {
		st := s.Status
		if st.Phase != sessionsv1alpha1.SendCompleted || st.Status != sessionsv1alpha1.SendAccepted || len(st.Turns) != 3 || st.Announce == nil || st.Announce.Status != sessionsv1alpha1.AnnounceDelivered {
			t.Errorf("send %s ended %s/%s with %d turns, announce %+v, error %q", s.Name, st.Phase, st.Status, len(st.Turns), st.Announce, st.Error)
			continue
		}
		for _, turn := range st.Turns {
			if turn.Error != "" {
				t.Errorf("send %s round %d: %s", s.Name, turn.Round, turn.Error)
			}
		}
		announced[string(s.UID)+"/announce"] = st.Announce.Message
	}
	for _, r := range runs {
		st := r.Status
		if st.Phase != sessionsv1alpha1.RunSucceeded || st.Announce == nil || st.Announce.Status != sessionsv1alpha1.AnnounceDelivered {
			t.Errorf("run %s ended %s (%s), announce %+v", r.Name, st.Phase, st.Notes, st.Announce)
			continue
		}
		announced[string(r.UID)+"/announce"] = st.Announce.Message
	}

	e.checkTranscripts(t, ns, sends, runs)

	// Each announce reached the sink under its key; a repeat of a key is a retry the sink
	// deduplicates, and must carry the same message.
	posts := sink.received(ns)
	repeats := 0
	for key, msg := range announced {
		got := posts[key]
		if len(got) == 0 {
			t.Errorf("announce %s is delivered in status but the sink never saw it", key)
			continue
		}
		repeats += len(got) - 1
		for _, m := range got {
			if m.Text != msg {
				t.Errorf("announce %s posted %q, status says %q", key, m.Text, msg)
			}
		}
	}
	if len(posts) != len(announced) {
		t.Errorf("sink saw %d announce keys, want %d", len(posts), len(announced))
	}
	t.Logf("%d sends and %d spawns ended after %d faults; %d announce POSTs were retries of a delivered key",
		len(sends), len(runs), len(faults), repeats)
}

// crashFixtures: two scripted agents, a policy with two ping-pong turns and a webchat sink,
// and the target and requester sessions.
func (e *env) crashFixtures(t *testing.T, ns, sinkURL string) {
	t.Helper()
	agent := func(name string, rules ...sessionsv1alpha1.ScriptRule) *sessionsv1alpha1.Agent {
		return &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted, Script: rules}}}
	}
	// Announce replies quote their input so that every message of the run is unique.
	e.mustCreate(t,
		&sessionsv1alpha1.SessionPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}, Spec: sessionsv1alpha1.SessionPolicySpec{
			Visibility:   sessionsv1alpha1.VisibilityAll,
			AgentToAgent: sessionsv1alpha1.AgentToAgentSpec{Enabled: true, Allow: []string{"*"}, MaxPingPongTurns: ptr.To[int32](2)},
			Delivery:     []sessionsv1alpha1.DeliverySink{{Channel: "webchat", URL: sinkURL}},
			// Budgets on, generous: every check runs under the faults and none may stop work.
			Budgets: &sessionsv1alpha1.Budgets{
				Namespace: &sessionsv1alpha1.NamespaceBudget{Window: metav1.Duration{Duration: 24 * time.Hour}, MaxTokens: ptr.To[int64](1_000_000_000_000)},
				PerSend:   &sessionsv1alpha1.PolicyBudget{Budget: sessionsv1alpha1.Budget{MaxTokens: ptr.To[int64](100_000_000), MaxTurns: ptr.To[int32](100)}},
				PerRun:    &sessionsv1alpha1.PolicyBudget{Budget: sessionsv1alpha1.Budget{MaxTokens: ptr.To[int64](100_000_000), MaxTurns: ptr.To[int32](100)}},
			},
		}},
		compacting(agent("bob", sessionsv1alpha1.ScriptRule{Match: "^Compaction step", Reply: "summary"},
			sessionsv1alpha1.ScriptRule{Match: "^Agent-to-agent announce step", Reply: "announced {{input}}"})),
		agent("alice", sessionsv1alpha1.ScriptRule{Match: "^Sub-agent announce step", Reply: "relayed {{input}}"}),
	)
	var sessions []*sessionsv1alpha1.AgentSession
	for i := range chaosSessions {
		for _, key := range []string{targetKey(i), requesterKey(i)} {
			k, err := sessionkey.Parse(key)
			if err != nil {
				t.Fatal(err)
			}
			s := &sessionsv1alpha1.AgentSession{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sessionkey.ObjectName(key)},
				Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: k.AgentID, ChatType: sessionsv1alpha1.ChatTypeGroup,
					DeliveryContext: &sessionsv1alpha1.DeliveryContext{Channel: "webchat", To: fmt.Sprintf("room-%d", i)}},
			}
			sessions = append(sessions, s)
		}
	}
	e.createSessions(t, sessions...)
}

// compacting gives an agent a small context window, so that its sessions compact several
// times during the run (the target sessions: each holds a few thousand tokens by the end).
func compacting(a *sessionsv1alpha1.Agent) *sessionsv1alpha1.Agent {
	a.Spec.Model.ContextTokens = ptr.To[int64](3000)
	a.Spec.Memory.Compaction.KeepRecentMessages = ptr.To[int32](6)
	return a
}

func targetKey(i int) string    { return fmt.Sprintf("agent:bob:webchat:group:t%d", i) }
func requesterKey(i int) string { return fmt.Sprintf("agent:alice:webchat:group:r%d", i) }

// crashWorkload interleaves the spawns with the sends.
func crashWorkload(ns string) []client.Object {
	var objs []client.Object
	every := max(1, chaosSends/max(1, chaosSpawns))
	spawned := 0
	for i := range chaosSends {
		objs = append(objs, &sessionsv1alpha1.SessionSend{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("send-%03d", i)},
			Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: targetKey(i % chaosSessions), Message: fmt.Sprintf("msg-%03d", i),
				FromSessionKey: requesterKey(i % chaosSessions), TimeoutSeconds: ptr.To[int32](0)},
		})
		if i%every == 0 && spawned < chaosSpawns {
			objs = append(objs, spawn(ns, spawned))
			spawned++
		}
	}
	for ; spawned < chaosSpawns; spawned++ {
		objs = append(objs, spawn(ns, spawned))
	}
	return objs
}

func spawn(ns string, i int) *sessionsv1alpha1.SubagentRun {
	return &sessionsv1alpha1.SubagentRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("spawn-%02d", i)},
		Spec: sessionsv1alpha1.SubagentRunSpec{Task: fmt.Sprintf("task-%02d", i), AgentID: "alice",
			RequesterSessionKey: requesterKey(i % chaosSessions)},
	}
}

// createAll creates objs in order as a client would: while the manager (and with it the
// admission webhook) or the API server is down, a create fails and is tried again.
func (e *env) createAll(t *testing.T, objs []client.Object) {
	for _, o := range objs {
		for attempt := 0; ; attempt++ {
			err := e.k8s.Create(context.Background(), o)
			if err == nil || apierrors.IsAlreadyExists(err) {
				break
			}
			if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
				t.Errorf("create %s: %v", o.GetName(), err)
				break
			}
			if attempt%100 == 99 {
				t.Logf("create %s still failing: %v", o.GetName(), err)
			}
			time.Sleep(100 * time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type fault string

const (
	killManager      fault = "SIGKILL manager"
	killStore        fault = "SIGKILL transcript-store"
	restartAPIServer fault = "restart kube-apiserver"
)

func faultPlan(rng *rand.Rand) []fault {
	var plan []fault
	for range managerKills {
		plan = append(plan, killManager)
	}
	for range storeKills {
		plan = append(plan, killStore)
	}
	for range apiRestarts {
		plan = append(plan, restartAPIServer)
	}
	rng.Shuffle(len(plan), func(i, j int) { plan[i], plan[j] = plan[j], plan[i] })
	return plan
}

// inject applies the faults, each after its gap; a killed process is started again at once,
// as the kubelet restarts a container.
func (e *env) inject(t *testing.T, faults []fault, gaps []time.Duration) {
	ctx := context.Background()
	for i, f := range faults {
		time.Sleep(gaps[i])
		var err error
		switch f {
		case killManager:
			e.cluster.Kill(devcluster.Manager)
			err = e.cluster.Restart(ctx, devcluster.Manager)
		case killStore:
			e.cluster.Kill(devcluster.Store)
			err = e.cluster.Restart(ctx, devcluster.Store)
		case restartAPIServer:
			err = e.cluster.RestartAPIServer()
		}
		if err != nil {
			t.Errorf("fault %d (%s): %v", i, f, err)
			return
		}
	}
}

// waitTerminal waits until every send and run has finished: Completed, Failed or Cancelled.
func (e *env) waitTerminal(t *testing.T, ns string, nSends, nRuns int) ([]sessionsv1alpha1.SessionSend, []sessionsv1alpha1.SubagentRun) {
	t.Helper()
	var sends sessionsv1alpha1.SessionSendList
	var runs sessionsv1alpha1.SubagentRunList
	pending := func() []string {
		var out []string
		for _, s := range sends.Items {
			if !sessionsv1alpha1.Finished(s.Status.Conditions) {
				out = append(out, fmt.Sprintf("%s (%s)", s.Name, s.Status.Phase))
			}
		}
		for _, r := range runs.Items {
			if !sessionsv1alpha1.Finished(r.Status.Conditions) {
				out = append(out, fmt.Sprintf("%s (%s)", r.Name, r.Status.Phase))
			}
		}
		return out
	}
	e.poll(t, "every send and run to complete", func() (bool, error) {
		ctx := context.Background()
		if err := e.k8s.List(ctx, &sends, client.InNamespace(ns)); err != nil {
			return false, nil //nolint:nilerr // the API server may be restarting
		}
		if err := e.k8s.List(ctx, &runs, client.InNamespace(ns)); err != nil {
			return false, nil //nolint:nilerr
		}
		return len(sends.Items) == nSends && len(runs.Items) == nRuns && len(pending()) == 0, nil
	}, func() string {
		p := pending()
		return fmt.Sprintf("%d sends, %d runs, %d not complete: %s", len(sends.Items), len(runs.Items), len(p), strings.Join(p[:min(20, len(p))], ", "))
	})
	return sends.Items, runs.Items
}

// poll calls cond until it is true, failing the test after settleTimeout with what explain
// says about the state.
func (e *env) poll(t *testing.T, what string, cond func() (bool, error), explain ...func() string) {
	t.Helper()
	deadline := time.Now().Add(settleTimeout)
	for {
		ok, err := cond()
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			msg := ""
			for _, x := range explain {
				msg = x()
			}
			t.Fatalf("still waiting for %s after %s: %s", what, settleTimeout, msg)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkSpend: the namespace's budget window recorded the workload's spend in its
// SessionPolicy, whatever manager wrote it last (the spend goes on across restarts from the
// recorded one; a SIGKILL loses at most what the last few seconds added).
func (e *env) checkSpend(t *testing.T, ns string) {
	t.Helper()
	p := &sessionsv1alpha1.SessionPolicy{}
	e.poll(t, "the SessionPolicy's status.spend", func() (bool, error) {
		if err := e.k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "default"}, p); err != nil {
			return false, err
		}
		return p.Status.Spend != nil && p.Status.Spend.Tokens > 0, nil
	})
	t.Logf("the namespace's window spent %d tokens", p.Status.Spend.Tokens)
}

// checkTranscripts: no message is stored twice, and each session holds exactly the messages
// its sends and runs put there: per send 3 turns plus the announce turn, 2 messages each
// (round 1, 3 and the announce in the target, round 2 in the requester), per run the task
// and its reply in the child and the announce turn in the requester.
func (e *env) checkTranscripts(t *testing.T, ns string, sends []sessionsv1alpha1.SessionSend, runs []sessionsv1alpha1.SubagentRun) {
	t.Helper()
	want := map[string]int{}         // session key -> messages
	replies := map[string][]string{} // session key -> replies recorded in statuses
	for _, s := range sends {
		want[s.Spec.SessionKey] += 6
		want[s.Spec.FromSessionKey] += 2
		for _, turn := range s.Status.Turns {
			replies[turn.Session] = append(replies[turn.Session], turn.Reply)
		}
	}
	for _, r := range runs {
		want[r.Spec.RequesterSessionKey] += 2
		want[r.Status.ChildSessionKey] += 2
	}
	var sessions sessionsv1alpha1.AgentSessionList
	if err := e.k8s.List(context.Background(), &sessions, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	seen, folded := 0, 0
	for i := range sessions.Items {
		s := &sessions.Items[i]
		all := e.messages(t, s)
		seen++
		// Every record once, by its idempotency key, the turns' system contexts included;
		// those are then left out of the conversation counted below.
		keys := map[string]bool{}
		var recs, compactions []transcript.Record
		for _, r := range all {
			if r.IdempotencyKey != "" && keys[r.IdempotencyKey] {
				t.Errorf("session %s holds the record %s twice", s.Spec.Key, r.IdempotencyKey)
			}
			keys[r.IdempotencyKey] = true
			switch r.Message.Role {
			case transcript.RoleSystem:
			case transcript.RoleCompaction:
				compactions = append(compactions, r)
			default:
				recs = append(recs, r)
			}
		}
		checkCompactions(t, s, compactions)
		folded += len(compactions)
		if len(recs) != want[s.Spec.Key] {
			t.Errorf("session %s holds %d messages, want %d", s.Spec.Key, len(recs), want[s.Spec.Key])
		}
		count := map[string]int{}
		for _, r := range recs {
			m := r.Message.Role + ": " + text(r.Message)
			if count[m]++; count[m] == 2 {
				t.Errorf("session %s holds %q twice", s.Spec.Key, textutil.Truncate(m, 120))
			}
		}
		for _, reply := range replies[s.Spec.Key] {
			if n := count["assistant: "+reply]; n != 1 {
				t.Errorf("session %s holds the reply %q %d times, want once", s.Spec.Key, textutil.Truncate(reply, 80), n)
			}
		}
	}
	if seen != len(want) {
		t.Errorf("found %d sessions, want %d", seen, len(want))
	}
	t.Logf("%d sessions held %d compaction records", seen, folded)
}

// checkCompactions: the target sessions (whose agent has a small window) compacted, each
// compaction's range starts where the previous one's ended (none lost or doubled by a
// kill).
func checkCompactions(t *testing.T, s *sessionsv1alpha1.AgentSession, recs []transcript.Record) {
	t.Helper()
	if s.Spec.AgentID == "bob" && len(recs) == 0 {
		t.Errorf("session %s never compacted", s.Spec.Key)
	}
	next := int64(1)
	for _, r := range recs {
		c := r.Message.Compaction
		if c == nil || c.FromSeq != next || c.ToSeq < c.FromSeq || c.ToSeq >= r.Seq {
			t.Errorf("session %s: compaction record %d covers %+v, want a range from %d before it", s.Spec.Key, r.Seq, c, next)
			continue
		}
		next = c.ToSeq + 1
	}
}
