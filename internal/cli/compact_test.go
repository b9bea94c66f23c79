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

package cli

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// compact sets the annotation the session's controller acts on, to a new id each time,
// and keeps the session's other annotations.
func TestRequestCompaction(t *testing.T) {
	const key = "agent:main:main"
	s := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: sessionkey.ObjectName(key),
		Annotations: map[string]string{"keep": "me"}}, Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "main"}}
	cl := testenv.IndexFake(fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(s)).Build()
	ctx := context.Background()
	for _, id := range []string{"a", "b"} {
		if err := requestCompaction(ctx, cl, "team", key, id); err != nil {
			t.Fatal(err)
		}
		got := &sessionsv1alpha1.AgentSession{}
		if err := cl.Get(ctx, client.ObjectKeyFromObject(s), got); err != nil {
			t.Fatal(err)
		}
		if got.Annotations[sessionsv1alpha1.CompactRequestAnnotation] != id || got.Annotations["keep"] != "me" {
			t.Errorf("annotations %v, want %s=%s and keep=me", got.Annotations, sessionsv1alpha1.CompactRequestAnnotation, id)
		}
	}
	if err := requestCompaction(ctx, cl, "team", "agent:main:other", "c"); err == nil || !strings.Contains(err.Error(), "no session") {
		t.Errorf("an unknown key: %v", err)
	}
}
