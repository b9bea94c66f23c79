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

package lookup

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
)

func TestAgentConfirmsACacheMissWithTheAPIServer(t *testing.T) {
	agent := func(prompt string) *sessionsv1alpha1.Agent {
		return &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "bob", Namespace: "ns"}, Spec: sessionsv1alpha1.AgentSpec{SystemPrompt: prompt}}
	}
	reader := func(objs ...client.Object) client.Reader {
		return fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).Build()
	}
	cases := map[string]struct {
		cached, live client.Reader
		want         string // the found Agent's system prompt; "-" for none
	}{
		"in the cache":                  {cached: reader(agent("cached")), live: reader(agent("live")), want: "cached"},
		"not yet in the cache":          {cached: reader(), live: reader(agent("live")), want: "live"},
		"in neither":                    {cached: reader(), live: reader(), want: "-"},
		"in another namespace, or none": {cached: reader(), live: reader(&sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "bob", Namespace: "other"}}), want: "-"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Agent(context.Background(), tc.cached, tc.live, "ns", "bob")
			if err != nil {
				t.Fatal(err)
			}
			prompt := "-"
			if got != nil {
				prompt = got.Spec.SystemPrompt
			}
			if prompt != tc.want {
				t.Errorf("found %q, want %q", prompt, tc.want)
			}
		})
	}
}

// foundReader finds every object (its zero value) without allocating, as a cache hit costs
// the caller nothing but the copy.
type foundReader struct{ client.Reader }

func (foundReader) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return nil
}

// A found object costs a lookup no error inspection: every admission reads three or four.
func TestLookupsOfFoundObjectsAllocateOnlyTheObject(t *testing.T) {
	l := New(foundReader{}, foundReader{})
	ctx := context.Background()
	reads := map[string]func(){
		"Agent":         func() { _, _ = l.Agent(ctx, "ns", "bob") },
		"SessionPolicy": func() { _, _ = l.SessionPolicy(ctx, "ns") },
	}
	for name, read := range reads {
		if allocs := testing.AllocsPerRun(50, read); allocs > 1 {
			t.Errorf("%s: %.0f allocations, want the object's alone", name, allocs)
		}
	}
}
