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

package secretaccess

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
)

func TestGet(t *testing.T) {
	secret := func(name string, labels map[string]string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: labels}, Data: map[string][]byte{"k": []byte(name)}}
	}
	r := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(
		secret("team", nil),
		secret("shared", map[string]string{sessionsv1alpha1.AgentUsableLabel: "true"}),
	).Build()
	owner := func(vouched string) *sessionsv1alpha1.Agent {
		a := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}
		if vouched != "" {
			a.Annotations = map[string]string{sessionsv1alpha1.VouchedSecretsAnnotation: vouched}
		}
		return a
	}
	cases := map[string]struct {
		owner        *sessionsv1alpha1.Agent
		name         string
		wantUnusable bool
		wantNotFound bool
	}{
		"vouched":                    {owner: owner("team"), name: "team"},
		"opted in":                   {owner: owner(""), name: "shared"},
		"neither":                    {owner: owner(""), name: "team", wantUnusable: true},
		"missing and not vouched":    {owner: owner(""), name: "ghost", wantUnusable: true},
		"missing and vouched":        {owner: owner("ghost"), name: "ghost", wantNotFound: true},
		"vouched for another Secret": {owner: owner("shared"), name: "team", wantUnusable: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v, err := Value(context.Background(), r, tc.owner, tc.name, "k")
			switch {
			case tc.wantUnusable:
				if !IsUnusable(err) || err.Error() != (&UnusableError{Name: tc.name}).Error() {
					t.Fatalf("err = %v, want the one unusable answer", err)
				}
			case tc.wantNotFound:
				if !apierrors.IsNotFound(err) {
					t.Fatalf("err = %v, want NotFound", err)
				}
			case err != nil || string(v) != tc.name:
				t.Fatalf("Value = %q, %v; want %q", v, err, tc.name)
			}
		})
	}
}
