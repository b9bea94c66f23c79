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

package caller

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/userlimits"
)

// shippedRole is the ClusterRole of config/rbac/mcp_impersonation_role.yaml as shipped.
func shippedRole(t *testing.T) *rbacv1.ClusterRole {
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "rbac", "mcp_impersonation_role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var r rbacv1.ClusterRole
		if err := dec.Decode(&r); errors.Is(err, io.EOF) {
			t.Fatal("no ClusterRole in mcp_impersonation_role.yaml")
		} else if err != nil {
			t.Fatal(err)
		}
		if r.Kind == "ClusterRole" {
			return &r
		}
	}
}

// TestImpersonatedCallsAreJudgedAsTheCaller runs on a real API server: a client the
// factory builds for a caller can do what the caller's RBAC allows and nothing more, and
// the shipped role is what lets the relaying identity impersonate at all.
func TestImpersonatedCallsAreJudgedAsTheCaller(t *testing.T) {
	testenv.RequireControlPlane(t)
	env := testenv.New()
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx := t.Context()
	admin, err := client.New(cfg, client.Options{Scheme: testenv.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"team", "other"} {
		if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	role := shippedRole(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(admin.Create(ctx, role))
	must(admin.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "relay"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "relay"}}}))
	must(admin.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{sessionsv1alpha1.GroupVersion.Group}, Resources: []string{"agentsessions"}, Verbs: []string{"list"}}}}))
	must(admin.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "alice"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "reader"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "alice"}}}))

	factory := func(name string) *Factory {
		u, err := env.AddUser(envtest.User{Name: name, Groups: []string{"system:authenticated"}}, cfg)
		must(err)
		f, err := NewFactory(u.Config(), testenv.Scheme())
		must(err)
		return f
	}
	list := func(f *Factory, who, ns string) error {
		c, err := f.Client(&user.DefaultInfo{Name: who, UID: who + "-uid", Groups: []string{"system:authenticated"},
			Extra: map[string][]string{"authentication.kubernetes.io/credential-id": {"JTI=1"}}})
		must(err)
		var l sessionsv1alpha1.AgentSessionList
		return c.List(ctx, &l, client.InNamespace(ns))
	}
	relay := factory("relay")
	if err := list(relay, "alice", "team"); err != nil {
		t.Errorf("alice listing team through the relay: %v, want allowed", err)
	}
	if err := list(relay, "alice", "other"); !apierrors.IsForbidden(err) {
		t.Errorf("alice listing other through the relay: %v, want forbidden (her RBAC)", err)
	}
	if err := list(relay, "bob", "team"); !apierrors.IsForbidden(err) {
		t.Errorf("bob listing team through the relay: %v, want forbidden (no rights)", err)
	}
	if err := list(factory("stranger"), "alice", "team"); !apierrors.IsForbidden(err) {
		t.Errorf("an identity without the shipped role impersonating alice: %v, want forbidden", err)
	}

	// Access, which lets the sidecar answer reads from its cache, decides as the API server
	// decided the impersonated calls above.
	access, err := NewAccess(cfg, clock.RealClock{})
	must(err)
	for _, c := range []struct {
		who, ns string
		allowed bool
	}{{"alice", "team", true}, {"alice", "other", false}, {"bob", "team", false}} {
		err := access.Check(ctx, &user.DefaultInfo{Name: c.who, Groups: []string{"system:authenticated"}},
			authzv1.ResourceAttributes{Verb: "list", Group: sessionsv1alpha1.GroupVersion.Group, Resource: "agentsessions", Namespace: c.ns})
		if c.allowed && err != nil || !c.allowed && !apierrors.IsForbidden(err) {
			t.Errorf("Access.Check(%s lists %s) = %v, want allowed=%v", c.who, c.ns, err, c.allowed)
		}
	}

	// With a per-user rate, all of a caller's clients and reviews share one bucket: alice's
	// second call, on a new client, is refused before it reaches the API server, and so is
	// a review about her the memo does not answer; bob's calls are not.
	rates := userlimits.NewRates(1, 1, clocktesting.NewFakePassiveClock(time.Now()))
	relay.Limit = rates.Limiter
	access.SARs = userlimits.ChargeSARs(access.SARs, rates)
	if err := list(relay, "alice", "team"); err != nil {
		t.Errorf("alice's first call within her burst: %v", err)
	}
	if err := list(relay, "alice", "team"); !errors.Is(err, userlimits.ErrRateLimited) {
		t.Errorf("alice's second call over her rate: %v, want ErrRateLimited", err)
	}
	aliceIn := func(ns string) error {
		return access.Check(ctx, &user.DefaultInfo{Name: "alice", Groups: []string{"system:authenticated"}},
			authzv1.ResourceAttributes{Verb: "get", Group: sessionsv1alpha1.GroupVersion.Group, Resource: "agentsessions", Namespace: ns})
	}
	if err := aliceIn("team"); !errors.Is(err, userlimits.ErrRateLimited) {
		t.Errorf("a review about alice over her rate: %v, want ErrRateLimited", err)
	}
	if err := list(relay, "bob", "team"); !apierrors.IsForbidden(err) {
		t.Errorf("bob's call: %v, want the API server's forbidden (his own bucket)", err)
	}
}
