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

package transcriptstore_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	coreclient "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	transcriptclient "github.com/agent-sessions/agent-session-operator/internal/transcript/client"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore/sidecar"
)

// The doors' fixture: a real API server, the transcript-store sidecar (sidecar.Run) running
// as its own user with the shipped RBAC, two sessions with transcripts in namespace team,
// and callers that are ServiceAccounts with tokens for the history audience.
const (
	doorNS   = "team"
	otherNS  = "other"
	keyA     = "agent:a:main"
	keyB     = "agent:a:other"
	audience = "agent-sessions"
	heldSend = "held-send"
	heldRun  = "held-run"
	// heldApproval waits for a decision (no manager runs here to expire or resume it);
	// decidedApproval is the one the decide rows approve (again and again: the same
	// decision is no change).
	heldApproval    = "held-approval"
	decidedApproval = "decided-approval"
	sidecarID       = "transcript-store"
)

type doorFixture struct {
	t     *testing.T
	base  string
	hc    *http.Client
	clock *clocktesting.FakeClock
	admin client.Client
	core  *coreclient.CoreV1Client
	// store is the sidecar's internal API, as the manager reaches it.
	store *transcriptclient.Client
}

// startDoors starts the control plane and the sidecar; sessions A and B hold one message
// each in team (and A in other), with a send and a run of A's to cancel.
func startDoors(t *testing.T) *doorFixture {
	t.Helper()
	testenv.RequireControlPlane(t)
	env := testenv.New()
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx := t.Context()
	f := &doorFixture{t: t, clock: clocktesting.NewFakeClock(time.Now()),
		hc: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}}
	f.admin, err = client.New(cfg, client.Options{Scheme: testenv.Scheme()})
	f.must(err)
	f.core, err = coreclient.NewForConfig(cfg)
	f.must(err)
	for _, ns := range []string{doorNS, otherNS} {
		f.must(f.admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	}

	// The sidecar's own identity holds the shipped roles and nothing else.
	a := runSidecarAs(t, env, cfg, f.admin, []string{"history_auth_role.yaml", "mcp_impersonation_role.yaml"},
		transcriptstore.SidecarConfig{DefaultNamespace: doorNS, Audiences: []string{audience}, Clock: f.clock})
	f.base = "https://" + a.public

	store := transcriptclient.NewLoopbackClient("http://" + a.internal)
	f.store = store
	for _, ns := range []string{doorNS, otherNS} {
		f.must(f.admin.Create(ctx, &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a"},
			Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted},
				Memory: sessionsv1alpha1.MemorySpec{Enabled: true,
					Embeddings: &sessionsv1alpha1.EmbeddingsSpec{Provider: sessionsv1alpha1.EmbeddingsScripted}}}}))
		for _, key := range []string{keyA, keyB} {
			if ns == otherNS && key == keyB {
				continue
			}
			s := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sessionkey.ObjectName(key)},
				Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "a"}}
			f.must(f.admin.Create(ctx, s))
			s.Status.SessionID = "sid-" + s.Name
			f.must(f.admin.Status().Update(ctx, s))
			_, err := store.CreateSession(ctx, transcript.SessionHeader{Namespace: ns, SessionID: s.Status.SessionID,
				SessionKey: key, Name: s.Name, CreatedAt: time.Now()})
			f.must(err)
			_, err = store.Append(ctx, ns, s.Status.SessionID, transcript.AppendRequest{Message: transcript.Message{
				Role: transcript.RoleUser, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: "secret of " + key}}}})
			f.must(err)
		}
	}
	// The search index takes the appends in the background: wait until it holds them.
	for _, ns := range []string{doorNS, otherNS} {
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
			res, err := store.Search(ctx, transcript.SearchQuery{Namespace: ns, Text: "secret"})
			f.must(err)
			if len(res.Hits) > 0 || time.Now().After(deadline) {
				break
			}
		}
	}
	f.must(f.admin.Create(ctx, &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Namespace: doorNS, Name: heldSend},
		Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: keyA, Message: "held"}}))
	f.must(f.admin.Create(ctx, &sessionsv1alpha1.SubagentRun{ObjectMeta: metav1.ObjectMeta{Namespace: doorNS, Name: heldRun},
		Spec: sessionsv1alpha1.SubagentRunSpec{AgentID: "a", Task: "held", RequesterSessionKey: keyA}}))
	for _, name := range []string{heldApproval, decidedApproval} {
		f.must(f.admin.Create(ctx, &sessionsv1alpha1.ToolApproval{ObjectMeta: metav1.ObjectMeta{Namespace: doorNS, Name: name},
			Spec: sessionsv1alpha1.ToolApprovalSpec{SessionKey: keyA, AgentID: "a", Tool: "mcp__db__drop", Owner: sessionsv1alpha1.ApprovalOwner{Kind: "SessionSend", Name: heldSend},
				ExpiresAt: metav1.NewTime(time.Now().Add(time.Hour))}}))
	}
	return f
}

func (f *doorFixture) must(err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

// sidecarAddrs are a running sidecar's internal and public addresses.
type sidecarAddrs struct{ internal, public string }

// runSidecarAs runs the sidecar (sidecar.Run, with sc's namespace, audiences and clock) as
// its own user, sidecarID, holding the ClusterRoles of the shipped RBAC files and nothing
// else, until the test ends.
func runSidecarAs(t *testing.T, env *envtest.Environment, cfg *rest.Config, admin client.Client, roleFiles []string,
	sc transcriptstore.SidecarConfig) sidecarAddrs {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, file := range roleFiles {
		for _, r := range clusterRoles(t, filepath.Join(testenv.RepoRoot(), "config", "rbac", file)) {
			must(admin.Create(t.Context(), r))
			must(admin.Create(t.Context(), &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: r.Name},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: r.Name},
				Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: sidecarID}}}))
		}
	}
	u, err := env.AddUser(envtest.User{Name: sidecarID, Groups: []string{"system:authenticated"}}, cfg)
	must(err)
	kc, err := u.KubeConfig()
	must(err)
	sc.Kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	must(os.WriteFile(sc.Kubeconfig, kc, 0o600))
	sc.DataDir, sc.Socket, sc.Listen, sc.Log = t.TempDir(), "127.0.0.1:0", "127.0.0.1:0", logr.Discard()
	ready := make(chan sidecarAddrs, 1)
	sc.Ready = func(s, l string) { ready <- sidecarAddrs{s, l} }
	sctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sidecar.Run(sctx, sc) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case a := <-ready:
		return a
	case err := <-done:
		t.Fatalf("sidecar: %v", err)
	}
	return sidecarAddrs{}
}

// clusterRoles are the ClusterRoles of a shipped RBAC file.
func clusterRoles(t *testing.T, path string) []*rbacv1.ClusterRole {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []*rbacv1.ClusterRole
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var r rbacv1.ClusterRole
		if err := dec.Decode(&r); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		if r.Kind == "ClusterRole" {
			out = append(out, &r)
		}
	}
}

// grant makes a ServiceAccount of team with rules bound to it, and returns a token of it
// for aud.
func (f *doorFixture) grant(sa string, rules []rbacv1.PolicyRule) {
	ctx := f.t.Context()
	f.must(f.admin.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: doorNS, Name: sa}}))
	f.must(f.admin.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: doorNS, Name: sa}, Rules: rules}))
	f.must(f.admin.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: doorNS, Name: sa},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: sa},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: doorNS}}}))
}

// token is a token of the ServiceAccount sa of team for aud.
func (f *doorFixture) token(sa, aud string) string {
	tr, err := f.core.ServiceAccounts(doorNS).CreateToken(f.t.Context(), sa,
		&authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{Audiences: []string{aud}}}, metav1.CreateOptions{})
	f.must(err)
	return tr.Status.Token
}

// eventually retries try until it holds, stepping the access layer's clock past its memory
// before each try: an answer given before RBAC reached the authorizer is not kept.
func (f *doorFixture) eventually(what string, try func() (bool, string)) {
	f.t.Helper()
	deadline := time.Now().Add(testenv.Timeout)
	for {
		f.clock.Step(transcriptstore.DecisionTTL + time.Second)
		ok, got := try()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("%s: still %s", what, got)
		}
		time.Sleep(testenv.Interval)
	}
}

// answer is what a door answered: the HTTP status, and the body or tool result text.
type answer struct {
	status int
	text   string
	isErr  bool
}

// refused: the door refused the caller (401 or 403 before anything else).
func (a answer) refused() bool {
	return a.status == http.StatusUnauthorized || a.status == http.StatusForbidden
}

func (f *doorFixture) do(method, path, token string, body any) answer {
	f.t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		f.must(err)
		r = bytes.NewReader(b)
	}
	ctx, cancel := context.WithCancel(f.t.Context())
	defer cancel() // ends an /events stream once its status is known
	req, err := http.NewRequestWithContext(ctx, method, f.base+path, r)
	f.must(err)
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := f.hc.Do(req)
	f.must(err)
	defer func() { _ = resp.Body.Close() }()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return answer{status: resp.StatusCode}
	}
	b, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, text: string(b)}
}

// history is GET /sessions/KEY/history in ns.
func (f *doorFixture) history(token, ns, key string) answer {
	return f.do(http.MethodGet, "/sessions/"+url.PathEscape(key)+"/history?namespace="+ns, token, nil)
}

// tool calls a session tool through /mcp (a new MCP session of the caller, as session when
// set) or through /console/tools/.
func (f *doorFixture) tool(door, token, ns, session, name string, args map[string]any) answer {
	f.t.Helper()
	if door == "console" {
		if args == nil {
			args = map[string]any{}
		}
		a := f.do(http.MethodPost, "/console/tools/"+name+"?namespace="+ns, token, args)
		a.isErr = a.status != http.StatusOK
		return a
	}
	q := url.Values{"namespace": {ns}}
	if session != "" {
		q.Set("session", session)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "doors", Version: "v0"}, nil)
	hc := &http.Client{Transport: bearer{token: token, next: f.hc.Transport}}
	cs, err := c.Connect(f.t.Context(), &mcp.StreamableClientTransport{Endpoint: f.base + "/mcp?" + q.Encode(), HTTPClient: hc}, nil)
	if err != nil {
		// The SDK reports the refused initialize by its status text.
		for _, code := range []int{http.StatusUnauthorized, http.StatusForbidden} {
			if strings.Contains(err.Error(), http.StatusText(code)) {
				return answer{status: code, text: err.Error()}
			}
		}
		f.t.Fatalf("connect to /mcp: %v", err)
	}
	defer func() { _ = cs.Close() }()
	res, err := cs.CallTool(f.t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	f.must(err)
	return answer{status: http.StatusOK, text: res.Content[0].(*mcp.TextContent).Text, isErr: res.IsError}
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// messagesOf is how many messages sessions_list's row of key carries.
func messagesOf(t *testing.T, listed, key string) int {
	var out struct {
		Sessions []struct {
			Key      string            `json:"key"`
			Messages []json.RawMessage `json:"messages"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(listed), &out); err != nil {
		t.Fatalf("sessions_list result %s: %v", listed, err)
	}
	for _, s := range out.Sessions {
		if s.Key == key {
			return len(s.Messages)
		}
	}
	t.Fatalf("sessions_list result %s has no row %s", listed, key)
	return 0
}
