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

package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/kubernetes"
)

// historyClient trusts the local history API's self-signed certificate.
func historyClient() *http.Client {
	pem, err := os.ReadFile(cluster.HistoryCAFile)
	Expect(err).NotTo(HaveOccurred())
	pool := x509.NewCertPool()
	Expect(pool.AppendCertsFromPEM(pem)).To(BeTrue())
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
}

// status GETs url with token (none when empty) and returns the status code.
func status(c *http.Client, url, token string) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	Expect(err).NotTo(HaveOccurred())
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	Expect(err).NotTo(HaveOccurred())
	_ = resp.Body.Close()
	return resp.StatusCode
}

// tokenWithoutRights is a ServiceAccount token, for audiences (none: the API server's own),
// of a user bound to no role.
func tokenWithoutRights(audiences ...string) string {
	return serviceAccountToken("nobody-", nil, audiences...)
}

// serviceAccountToken is a token, for audiences, of a new ServiceAccount in default whose
// name starts with prefix, bound to a Role of rules there (none when rules is empty).
func serviceAccountToken(prefix string, rules []rbacv1.PolicyRule, audiences ...string) string {
	_, token := serviceAccount(prefix, rules, nil, audiences...)
	return token
}

// serviceAccount makes a ServiceAccount in default whose name starts with prefix, bound
// there to a Role of rules (none when rules is empty) and to each of clusterRoles; it
// returns the user name the API server knows it by and a token for audiences.
func serviceAccount(prefix string, rules []rbacv1.PolicyRule, clusterRoles []string, audiences ...string) (string, string) {
	cs, err := kubernetes.NewForConfig(cluster.Config)
	Expect(err).NotTo(HaveOccurred())
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix, Namespace: "default"}}
	sa, err = cs.CoreV1().ServiceAccounts("default").Create(ctx, sa, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	bind := func(name string, ref rbacv1.RoleRef) {
		_, err := cs.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    ref,
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: "default"}},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
	}
	if len(rules) > 0 {
		_, err = cs.RbacV1().Roles("default").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: sa.Name}, Rules: rules}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		bind(sa.Name, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: sa.Name})
	}
	for _, role := range clusterRoles {
		bind(sa.Name+"-"+role, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role})
	}
	tr, err := cs.CoreV1().ServiceAccounts("default").CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{Audiences: audiences}}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	return serviceaccount.MakeUsername("default", sa.Name), tr.Status.Token
}

// selfSigned accepts the manager's self-signed metrics certificate.
var selfSigned = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // local self-signed

var _ = Describe("transport and metrics", func() {
	It("serves history over TLS only, so bearer tokens never cross in the clear", func() {
		plain := status(http.DefaultClient, "http://"+cluster.HistoryAddr+"/sessions/agent:main:main/history?namespace=default", cluster.Token)
		Expect(plain).To(Equal(http.StatusBadRequest), "a plain HTTP request to the TLS listener")
		// Over TLS the same request reaches the handler (an unknown session: 404).
		Expect(status(historyClient(), cluster.HistoryURL()+"/sessions/agent:nobody:main/history?namespace=default", cluster.Token)).
			To(Equal(http.StatusNotFound))
	})

	It("answers the manager's /metrics only to a token allowed to get it", func() {
		url := "https://" + cluster.MetricsAddr + "/metrics"
		Expect(status(selfSigned, url, "")).To(Equal(http.StatusUnauthorized))
		Expect(status(selfSigned, url, tokenWithoutRights())).To(Equal(http.StatusForbidden))
		Expect(status(selfSigned, url, cluster.Token)).To(Equal(http.StatusOK))
	})

	It("answers the transcript-store's /metrics only to a token allowed to get it", func() {
		url := cluster.HistoryURL() + "/metrics"
		Expect(status(historyClient(), url, "")).To(Equal(http.StatusUnauthorized))
		Expect(status(historyClient(), url, tokenWithoutRights())).To(Equal(http.StatusForbidden))
		Expect(status(historyClient(), url, cluster.Token)).To(Equal(http.StatusOK))
	})

	It("refuses a history reader's token minted for the API server only", func() {
		url := cluster.HistoryURL() + "/sessions/agent:main:main/history?namespace=default"
		Expect(status(historyClient(), url, tokenWithoutRights())).To(Equal(http.StatusUnauthorized))
	})
})
