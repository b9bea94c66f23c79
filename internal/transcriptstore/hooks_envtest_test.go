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
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	transcriptclient "github.com/agent-sessions/agent-session-operator/internal/transcript/client"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
)

// The /hooks door, on a real API server with the sidecar running as its own user with the
// shipped roles (history_auth_role.yaml, hook_deliveries_role.yaml: no Secrets) and nothing
// else; the test hands it the hooks' keys over the internal API, as the manager's SessionHook
// controller does. Deliveries are signed by the openssl command: an HMAC-SHA256 independent
// of the door's (the Standard Webhooks library) and of Go's.

const hookNS = "hooks"

// hookKey is the raw key of the Standard Webhooks secret whsec_<base64 hookKey>.
var hookKey = []byte("the hook's signing key, 32 bytes")

type hookFixture struct {
	t     *testing.T
	base  string
	hc    *http.Client
	clock *clocktesting.FakeClock
	admin client.Client
	// keys is the sidecar's internal API, as the manager reaches it.
	keys *transcriptclient.Client
}

func startHooks(t *testing.T) *hookFixture {
	t.Helper()
	testenv.RequireControlPlane(t)
	env := testenv.New()
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx := t.Context()
	f := &hookFixture{t: t, clock: clocktesting.NewFakeClock(time.Now()),
		hc: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}}
	f.admin, err = client.New(cfg, client.Options{Scheme: testenv.Scheme()})
	f.must(err)
	f.must(f.admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hookNS}}))
	a := runSidecarAs(t, env, cfg, f.admin, []string{"history_auth_role.yaml", "hook_deliveries_role.yaml"},
		transcriptstore.SidecarConfig{DefaultNamespace: hookNS, Clock: f.clock})
	f.keys, f.base = transcriptclient.NewLoopbackClient("http://"+a.internal), "https://"+a.public
	f.must(f.admin.Create(ctx, &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: hookNS, Name: "bot"},
		Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted}}}))
	return f
}

func (f *hookFixture) must(err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

// standardSecret signs Standard Webhooks deliveries with hookKey.
var standardSecret = []byte("whsec_" + base64.StdEncoding.EncodeToString(hookKey))

// hook creates a SessionHook and, when secret is set, hands the store its key as the
// manager does for a Ready hook (nil: a hook whose Secret is missing or unusable).
func (f *hookFixture) hook(name string, secret []byte, mut ...func(*sessionsv1alpha1.SessionHookSpec)) *sessionsv1alpha1.SessionHook {
	h := &sessionsv1alpha1.SessionHook{ObjectMeta: metav1.ObjectMeta{Namespace: hookNS, Name: name}, Spec: sessionsv1alpha1.SessionHookSpec{
		AgentID: "bot", Message: "A delivery came:",
		SigningSecretRef: corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "secret"}}}
	for _, m := range mut {
		m(&h.Spec)
	}
	f.must(f.admin.Create(f.t.Context(), h))
	if secret != nil {
		b, err := json.Marshal(h)
		f.must(err)
		f.must(f.keys.PutHookKeys(f.t.Context(), transcript.HookKeys{Keys: []transcript.HookKey{
			{Namespace: hookNS, Name: name, Hook: b, Secret: secret}}}))
	}
	return h
}

// openssl is HMAC-SHA256 of msg with key, by the openssl command.
func openssl(t *testing.T, key []byte, msg []byte) []byte {
	t.Helper()
	cmd := exec.Command("openssl", "dgst", "-sha256", "-mac", "HMAC", "-macopt", "hexkey:"+hex.EncodeToString(key), "-binary")
	cmd.Stdin = bytes.NewReader(msg)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("openssl: %v", err)
	}
	return out
}

// signed are Standard Webhooks headers for body, id and ts, signed with key.
func signed(t *testing.T, key []byte, id string, ts time.Time, body []byte) http.Header {
	stamp := strconv.FormatInt(ts.Unix(), 10)
	sig := base64.StdEncoding.EncodeToString(openssl(t, key, []byte(id+"."+stamp+"."+string(body))))
	return http.Header{"Webhook-Id": {id}, "Webhook-Timestamp": {stamp}, "Webhook-Signature": {"v1," + sig}}
}

type hookAnswer struct {
	status int
	body   string
	send   string
	key    string
}

func (f *hookFixture) post(path string, h http.Header, body []byte) hookAnswer {
	f.t.Helper()
	req, err := http.NewRequestWithContext(f.t.Context(), http.MethodPost, f.base+path, bytes.NewReader(body))
	f.must(err)
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := f.hc.Do(req)
	f.must(err)
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	a := hookAnswer{status: resp.StatusCode, body: string(b)}
	var got struct {
		Send       string `json:"send"`
		SessionKey string `json:"sessionKey"`
	}
	if json.Unmarshal(b, &got) == nil {
		a.send, a.key = got.Send, got.SessionKey
	}
	return a
}

func (f *hookFixture) hookSends(hook string) []sessionsv1alpha1.SessionSend {
	var list sessionsv1alpha1.SessionSendList
	f.must(f.admin.List(f.t.Context(), &list, client.InNamespace(hookNS), client.MatchingLabels{sessionsv1alpha1.HookLabel: hook}))
	return list.Items
}

func TestHookDeliveries(t *testing.T) {
	f := startHooks(t)
	ctx := t.Context()
	h := f.hook("ci", standardSecret)
	body := []byte(`{"event":"build","status":"failed"}`)
	delivery := signed(t, hookKey, "msg_1", f.clock.Now(), body)

	var first hookAnswer
	t.Run("a signed delivery creates a send into a new hook session", func(t *testing.T) {
		first = f.post("/hooks/hooks/ci", delivery, body)
		if first.status != http.StatusAccepted || first.send == "" || !strings.HasPrefix(first.key, "hook:") {
			t.Fatalf("got %d %s, want 202 with a send and a hook: session key", first.status, first.body)
		}
		send := &sessionsv1alpha1.SessionSend{}
		f.must(f.admin.Get(ctx, client.ObjectKey{Namespace: hookNS, Name: first.send}, send))
		want := "A delivery came:\n\n{\n  \"event\": \"build\",\n  \"status\": \"failed\"\n}"
		if send.Spec.Message != want || send.Spec.SessionKey != first.key {
			t.Errorf("send %q into %s, want %q into %s", send.Spec.Message, send.Spec.SessionKey, want, first.key)
		}
		if send.Labels[sessionsv1alpha1.HookLabel] != "ci" || send.Annotations[sessionsv1alpha1.DeliveryIDAnnotation] != "msg_1" || !metav1.IsControlledBy(send, h) {
			t.Errorf("send labels %v annotations %v owners %v", send.Labels, send.Annotations, send.OwnerReferences)
		}
		session := &sessionsv1alpha1.AgentSession{}
		f.must(f.admin.Get(ctx, client.ObjectKey{Namespace: hookNS, Name: sessionkey.ObjectName(first.key)}, session))
		if session.Spec.AgentID != "bot" || session.Spec.Key != first.key {
			t.Errorf("session %+v", session.Spec)
		}
	})

	t.Run("the same delivery again is answered with the first send and creates nothing", func(t *testing.T) {
		again := f.post("/hooks/hooks/ci", delivery, body)
		if again.status != http.StatusOK || again.send != first.send || again.key != first.key {
			t.Errorf("got %d %s, want 200 with %s", again.status, again.body, first.send)
		}
		if n := len(f.hookSends("ci")); n != 1 {
			t.Errorf("%d sends, want 1", n)
		}
	})

	bad := f.post("/hooks/hooks/ci", signed(t, []byte("another key"), "msg_2", f.clock.Now(), body), body)
	t.Run("refusals answer as a bad signature, and create nothing", func(t *testing.T) {
		if bad.status != http.StatusUnauthorized {
			t.Fatalf("bad signature: %d %s, want 401", bad.status, bad.body)
		}
		f.hook("private", nil)
		for name, a := range map[string]hookAnswer{
			"old timestamp":           f.post("/hooks/hooks/ci", signed(t, hookKey, "msg_3", f.clock.Now().Add(-6*time.Minute), body), body),
			"timestamp ahead":         f.post("/hooks/hooks/ci", signed(t, hookKey, "msg_4", f.clock.Now().Add(6*time.Minute), body), body),
			"no signature":            f.post("/hooks/hooks/ci", nil, body),
			"unknown hook":            f.post("/hooks/hooks/nope", signed(t, hookKey, "msg_5", f.clock.Now(), body), body),
			"unknown namespace":       f.post("/hooks/nowhere/ci", signed(t, hookKey, "msg_6", f.clock.Now(), body), body),
			"no name":                 f.post("/hooks/hooks", signed(t, hookKey, "msg_7", f.clock.Now(), body), body),
			"no key from the manager": f.post("/hooks/hooks/private", signed(t, hookKey, "msg_8", f.clock.Now(), body), body),
			"a changed body":          f.post("/hooks/hooks/ci", signed(t, hookKey, "msg_9", f.clock.Now(), body), []byte(`{"event":"deploy"}`)),
		} {
			if a.status != bad.status || a.body != bad.body {
				t.Errorf("%s: %d %s, want %d %s", name, a.status, a.body, bad.status, bad.body)
			}
		}
		if n := len(f.hookSends("ci")) + len(f.hookSends("private")); n != 1 {
			t.Errorf("%d sends, want the first delivery's only", n)
		}
	})

	t.Run("a body over maxBodyBytes is 413", func(t *testing.T) { checkHookBodyBound(t, f) })

	t.Run("a flood is 429 over ratePerMinute, and accepted again a minute later", func(t *testing.T) { checkHookFlood(t, f, body) })

	t.Run("spec.signature github takes X-Hub-Signature-256, and spec.sessionKey the session", func(t *testing.T) { checkHookGitHub(t, f) })

	t.Run("the store reports the hook's deliveries to the manager, who acknowledges them", func(t *testing.T) {
		checkHookDeliveriesReported(t, f)
	})

	t.Run("a key the manager drops refuses the hook's deliveries", func(t *testing.T) {
		f.must(f.keys.PutHookKeys(ctx, transcript.HookKeys{Keys: []transcript.HookKey{{Namespace: hookNS, Name: "ci", Delete: true}}}))
		a := f.post("/hooks/hooks/ci", signed(t, hookKey, "msg_after_drop", f.clock.Now(), body), body)
		if a.status != bad.status || a.body != bad.body {
			t.Errorf("got %d %s, want %d %s", a.status, a.body, bad.status, bad.body)
		}
	})

	t.Run("only POST", func(t *testing.T) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.base+"/hooks/hooks/ci", nil)
		f.must(err)
		resp, err := f.hc.Do(req)
		f.must(err)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("GET: %d, want 405", resp.StatusCode)
		}
	})
}

// checkHookBodyBound: a signed body over the hook's bound, or any body over every hook's, is 413.
func checkHookBodyBound(t *testing.T, f *hookFixture) {
	f.hook("small", standardSecret, func(s *sessionsv1alpha1.SessionHookSpec) { s.MaxBodyBytes = 64 })
	big := []byte(`{"padding":"` + strings.Repeat("x", 100) + `"}`)
	if a := f.post("/hooks/hooks/small", signed(t, hookKey, "msg_10", f.clock.Now(), big), big); a.status != http.StatusRequestEntityTooLarge {
		t.Errorf("signed, over the hook's bound: %d %s, want 413", a.status, a.body)
	}
	huge := bytes.Repeat([]byte("x"), sessionsv1alpha1.MaxHookMaxBodyBytes+1)
	if a := f.post("/hooks/hooks/nope", nil, huge); a.status != http.StatusRequestEntityTooLarge {
		t.Errorf("unsigned, over every hook's bound: %d %s, want 413", a.status, a.body)
	}
	if n := len(f.hookSends("small")); n != 0 {
		t.Errorf("%d sends, want none", n)
	}
}

// checkHookFlood: deliveries over ratePerMinute are 429 until a minute has passed.
func checkHookFlood(t *testing.T, f *hookFixture, body []byte) {
	f.hook("flood", standardSecret, func(s *sessionsv1alpha1.SessionHookSpec) { s.RatePerMinute = 3 })
	var got []int
	for i := range 5 {
		id := "flood_" + strconv.Itoa(i)
		got = append(got, f.post("/hooks/hooks/flood", signed(t, hookKey, id, f.clock.Now(), body), body).status)
	}
	want := []int{202, 202, 202, 429, 429}
	if !slices.Equal(got, want) {
		t.Errorf("statuses %v, want %v", got, want)
	}
	f.clock.Step(time.Minute)
	if a := f.post("/hooks/hooks/flood", signed(t, hookKey, "flood_5", f.clock.Now(), body), body); a.status != http.StatusAccepted {
		t.Errorf("a minute later: %d %s, want 202", a.status, a.body)
	}
	if n := len(f.hookSends("flood")); n != 4 {
		t.Errorf("%d sends, want 4", n)
	}
}

// checkHookGitHub: spec.signature github takes X-Hub-Signature-256, and spec.sessionKey names
// the session.
func checkHookGitHub(t *testing.T, f *hookFixture) {
	f.hook("gh", []byte("It's a Secret to Everybody"), func(s *sessionsv1alpha1.SessionHookSpec) {
		s.Signature, s.SessionKey, s.Message = sessionsv1alpha1.HookSignatureGitHub, "hook:github-events", ""
	})
	payload := []byte("Hello, World!")
	hdr := http.Header{"X-Hub-Signature-256": {"sha256=" + hex.EncodeToString(openssl(t, []byte("It's a Secret to Everybody"), payload))},
		"X-Github-Delivery": {"72d3162e-cc78-11e3-81ab-4c9367dc0958"}}
	a := f.post("/hooks/hooks/gh", hdr, payload)
	if a.status != http.StatusAccepted || a.key != "hook:github-events" {
		t.Fatalf("got %d %s, want 202 into hook:github-events", a.status, a.body)
	}
	hdr.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(openssl(t, []byte("another"), payload)))
	if a := f.post("/hooks/hooks/gh", hdr, payload); a.status != http.StatusUnauthorized {
		t.Errorf("a bad GitHub signature: %d, want 401", a.status)
	}
}

// checkHookDeliveriesReported: the store reports the flood hook's deliveries to the manager,
// who acknowledges them; the store never writes the hook's status.
func checkHookDeliveriesReported(t *testing.T, f *hookFixture) {
	ctx := t.Context()
	got, err := f.keys.HookDeliveries(ctx, hookNS, "flood")
	if err != nil || got.Count != 4 || got.Last.IsZero() {
		t.Fatalf("deliveries %+v (%v); want 4 and a time", got, err)
	}
	f.must(f.keys.AckHookDeliveries(ctx, transcript.HookDelivery{Namespace: hookNS, Name: "flood", Count: 3}))
	if got, err = f.keys.HookDeliveries(ctx, hookNS, "flood"); err != nil || got.Count != 1 {
		t.Errorf("after acknowledging 3: %+v (%v); want 1", got, err)
	}
	h := &sessionsv1alpha1.SessionHook{}
	f.must(f.admin.Get(ctx, client.ObjectKey{Namespace: hookNS, Name: "flood"}, h))
	if h.Status.Deliveries != 0 || h.Status.LastDeliveryTime != nil {
		t.Errorf("the store wrote the hook's status: %+v; its controller is the one writer", h.Status)
	}
}
