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

// Package envtest runs the history API's real authentication path (TokenReview and
// SubjectAccessReview judged by a kube-apiserver from envtest) as a Ginkgo suite.
package envtest

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreclient "k8s.io/client-go/kubernetes/typed/core/v1"
	rbacclient "k8s.io/client-go/kubernetes/typed/rbac/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// Shared timeouts of this suite.
const (
	timeout  = 30 * time.Second
	interval = 100 * time.Millisecond
)

var (
	cp      *testenv.ControlPlane
	testEnv *envtest.Environment
	cfg     *rest.Config
)

func TestAuth(t *testing.T) {
	testenv.RequireControlPlane(t)
	RegisterFailHandler(Fail)
	RunSpecs(t, "transcript auth suite")
}

var _ = BeforeSuite(func() {
	var err error
	cp, err = testenv.Start()
	Expect(err).NotTo(HaveOccurred())
	testEnv, cfg = cp.Env, cp.Config
})

var _ = AfterSuite(func() { Expect(cp.Stop()).To(Succeed()) })

// grant creates namespace with the ServiceAccounts sas, all bound to one Role of rules,
// and returns a token of each.
func grant(ctx context.Context, namespace string, rules []rbacv1.PolicyRule, sas ...string) []string {
	core, err := coreclient.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	rbac, err := rbacclient.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	_, err = core.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	_, err = rbac.Roles(namespace).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "granted"}, Rules: rules}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "granted"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "granted"},
	}
	for _, sa := range sas {
		_, err = core.ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		binding.Subjects = append(binding.Subjects, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: namespace})
	}
	_, err = rbac.RoleBindings(namespace).Create(ctx, binding, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	tokens := make([]string, len(sas))
	for i, sa := range sas {
		tokens[i] = requestTokenIn(ctx, core, namespace, sa)
	}
	return tokens
}
