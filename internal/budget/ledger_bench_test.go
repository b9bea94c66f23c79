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
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

// BenchmarkJudgeThenCharge is what budgets add to one model call: a judge and a charge of a
// send under a namespace window and a per-send budget. The fake client's Get copies more
// than the informer cache's, so this is an upper bound.
func BenchmarkJudgeThenCharge(b *testing.B) {
	pol, snd := benchObjects()
	c := testenv.IndexFake(fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(pol, snd)).Build()
	benchLedger(b, NewLedger(c, nil))
}

// BenchmarkJudgeThenChargeShared is the same over a reader that shares its objects, as the
// informer cache does with client.UnsafeDisableDeepCopy: the ledger's own cost.
func BenchmarkJudgeThenChargeShared(b *testing.B) {
	pol, snd := benchObjects()
	benchLedger(b, NewLedger(sharedReader{pol: pol, send: snd}, nil))
}

func benchObjects() (*sessionsv1alpha1.SessionPolicy, *sessionsv1alpha1.SessionSend) {
	return policyWith(&sessionsv1alpha1.Budgets{Namespace: &sessionsv1alpha1.NamespaceBudget{Window: metav1.Duration{Duration: 24 * time.Hour}, MaxTokens: ptr.To[int64](1 << 62)},
		PerSend: &sessionsv1alpha1.PolicyBudget{Budget: sessionsv1alpha1.Budget{MaxTokens: ptr.To[int64](1 << 62)}}}, nil), send(nil)
}

func benchLedger(b *testing.B, l *Ledger) {
	ctx := context.Background()
	call := call("s", "u1", "round-1", PurposeTurn)
	b.ReportAllocs()
	for b.Loop() {
		if err := l.Judge(ctx, call); err != nil {
			b.Fatal(err)
		}
		l.Charge(ctx, call, usage.Turn{Input: 10, Output: 2})
	}
}

// sharedReader hands out its SessionPolicy and SessionSend without a deep copy.
type sharedReader struct {
	pol  *sessionsv1alpha1.SessionPolicy
	send *sessionsv1alpha1.SessionSend
}

func (r sharedReader) Get(_ context.Context, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	switch o := obj.(type) {
	case *sessionsv1alpha1.SessionPolicy:
		*o = *r.pol
	case *sessionsv1alpha1.SessionSend:
		*o = *r.send
	default:
		return apierrors.NewNotFound(schema.GroupResource{}, "")
	}
	return nil
}

func (r sharedReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return nil
}
