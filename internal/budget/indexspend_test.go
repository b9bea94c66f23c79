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

package budget

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// store is a memory indexer's account as the store keeps it: owed tokens taken off when
// their tally is acknowledged.
type store struct {
	n     int
	owed  int64
	tally int64
	acks  []transcript.IndexSpendAck
	fail  bool
}

func (s *store) IndexSpend(_ context.Context, a transcript.IndexSpendAck) (transcript.IndexSpend, error) {
	if s.fail {
		return transcript.IndexSpend{}, errors.New("store unreachable")
	}
	s.acks = append(s.acks, a)
	if a.Tally == fmt.Sprint(s.n) {
		s.owed -= s.tally
	}
	s.n++
	s.tally = s.owed
	return transcript.IndexSpend{ID: fmt.Sprint(s.n), Owed: map[string]int64{ns: s.owed}, Namespaces: []string{ns}}, nil
}

// TestIndexCharger: the indexer's tokens are charged to the namespace's window once each,
// across a failed collection; once the window is spent the namespace is held.
func TestIndexCharger(t *testing.T) {
	ctx := context.Background()
	window := &sessionsv1alpha1.NamespaceBudget{Window: metav1.Duration{Duration: 24 * time.Hour}, MaxTokens: ptr.To[int64](100)}
	l, _ := newLedger(t, policyWith(&sessionsv1alpha1.Budgets{Namespace: window}, nil))
	s := &store{}
	c := &IndexCharger{Gate: l, Store: s}

	s.owed = 60
	if err := c.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	s.fail = true
	if err := c.Collect(ctx); err == nil {
		t.Fatal("a failed collection reported no error")
	}
	s.fail = false
	s.owed += 50 // the indexer goes on: 110 in all, over the window's 100
	if err := c.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.Judge(ctx, indexCall(ns)); !errors.Is(err, ErrExceeded) {
		t.Errorf("after 110 tokens of a 100-token window the indexer may embed: %v", err)
	}
	l.mu.Lock()
	spent := l.spend[ns].spent.Tokens
	l.mu.Unlock()
	if spent != 110 {
		t.Errorf("window spent %d tokens, want 110 (each token once)", spent)
	}
	want := []transcript.IndexSpendAck{{}, {Tally: "1"}, {Tally: "2", Held: []string{ns}}}
	if diff := cmp.Diff(want, s.acks); diff != "" {
		t.Errorf("acknowledgements (-want +got):\n%s", diff)
	}
}
