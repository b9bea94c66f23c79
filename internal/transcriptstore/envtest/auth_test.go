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

package envtest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreclient "k8s.io/client-go/kubernetes/typed/core/v1"
	rbacclient "k8s.io/client-go/kubernetes/typed/rbac/v1"

	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
)

const ns = "team-a"

var _ = Describe("history API against a real API server", Ordered, func() {
	var (
		srv                        *httptest.Server
		readerToken, strangerToken string
		core                       *coreclient.CoreV1Client
		ctx                        = context.Background()
	)

	BeforeAll(func() {
		var err error
		core, err = coreclient.NewForConfig(cfg)
		Expect(err).NotTo(HaveOccurred())
		rbac, err := rbacclient.NewForConfig(cfg)
		Expect(err).NotTo(HaveOccurred())

		_, err = core.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		for _, sa := range []string{"reader", "stranger"} {
			_, err = core.ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
		}
		_, err = rbac.Roles(ns).Create(ctx, &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "transcript-reader"},
			Rules: []rbacv1.PolicyRule{{
				APIGroups: []string{transcriptstore.AuthGroup}, Verbs: []string{transcriptstore.AuthVerb},
				Resources: []string{transcriptstore.AuthResource + "/" + transcriptstore.AuthSubresource},
			}},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = rbac.RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "transcript-reader"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "transcript-reader"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "reader", Namespace: ns}},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())

		readerToken = requestToken(ctx, core, "reader")
		strangerToken = requestToken(ctx, core, "stranger")

		store, err := store.OpenFileStore(GinkgoT().TempDir())
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(store.Close)
		_, err = store.CreateSession(ctx, transcript.SessionHeader{Namespace: ns, SessionID: "s1", SessionKey: "agent:a:main"})
		Expect(err).NotTo(HaveOccurred())
		_, err = store.Append(ctx, ns, "s1", transcript.AppendRequest{Message: transcript.Message{
			Role: transcript.RoleUser, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: "hello"}},
		}})
		Expect(err).NotTo(HaveOccurred())

		authz, err := transcriptstore.NewKubeAuthorizer(cfg)
		Expect(err).NotTo(HaveOccurred())
		authz.SetTTL(0) // every request asks the API server
		srv = httptest.NewServer(transcriptstore.NewHistoryHandler(transcriptstore.HistoryOptions{
			Source: store, Authorizer: authz, DefaultNamespace: ns,
		}))
		DeferCleanup(srv.Close)
	})

	get := func(token string, key ...string) int {
		path := "/sessions/agent%3Aa%3Amain/history"
		if len(key) > 0 {
			path = "/sessions/" + url.PathEscape(key[0]) + "/history"
		}
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		Expect(err).NotTo(HaveOccurred())
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		_ = resp.Body.Close()
		return resp.StatusCode
	}

	It("serves a token whose user may get agentsessions/transcript", func() {
		// RBAC objects reach the API server's authorizer through an informer.
		Eventually(func() int { return get(readerToken) }, timeout, interval).Should(Equal(http.StatusOK))
	})

	It("forbids a valid token without the RBAC grant", func() {
		Expect(get(strangerToken)).To(Equal(http.StatusForbidden))
	})

	It("rejects a request without a token", func() {
		Expect(get("")).To(Equal(http.StatusUnauthorized))
	})

	It("lets RBAC grant one session by its object name", func() {
		rbac, err := rbacclient.NewForConfig(cfg)
		Expect(err).NotTo(HaveOccurred())
		_, err = core.ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "one-session"}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = rbac.Roles(ns).Create(ctx, &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "one-transcript"},
			Rules: []rbacv1.PolicyRule{{
				APIGroups: []string{transcriptstore.AuthGroup}, Verbs: []string{transcriptstore.AuthVerb},
				Resources:     []string{transcriptstore.AuthResource + "/" + transcriptstore.AuthSubresource},
				ResourceNames: []string{sessionkey.ObjectName("agent:a:main")},
			}},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = rbac.RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "one-transcript"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "one-transcript"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "one-session", Namespace: ns}},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		token := requestToken(ctx, core, "one-session")
		Eventually(func() int { return get(token) }, timeout, interval).Should(Equal(http.StatusOK))
		Expect(get(token, "agent:a:other")).To(Equal(http.StatusForbidden), "an unknown key outside the grant is 403, not 404")
		Expect(get(readerToken, "agent:a:other")).To(Equal(http.StatusNotFound))
	})

	It("rejects a token the API server does not accept", func() {
		Expect(get("not-a-real-token")).To(Equal(http.StatusUnauthorized))
	})
})

func requestToken(ctx context.Context, core *coreclient.CoreV1Client, sa string) string {
	return requestTokenIn(ctx, core, ns, sa)
}

// requestTokenIn is a token of the ServiceAccount sa of namespace.
func requestTokenIn(ctx context.Context, core *coreclient.CoreV1Client, namespace, sa string) string {
	tr, err := core.ServiceAccounts(namespace).CreateToken(ctx, sa, &authnv1.TokenRequest{
		Spec: authnv1.TokenRequestSpec{},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	Expect(tr.Status.Token).NotTo(BeEmpty())
	return tr.Status.Token
}
