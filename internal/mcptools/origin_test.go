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

package mcptools

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// elsewhere is a second origin on loopback that records what reaches it.
type elsewhere struct {
	*httptest.Server
	mu   sync.Mutex
	auth []string
}

func newElsewhere(t *testing.T) *elsewhere {
	e := &elsewhere{}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.auth = append(e.auth, r.Header.Get("Authorization"))
		e.mu.Unlock()
		http.Error(w, "not here", http.StatusNotFound)
	}))
	t.Cleanup(e.Close)
	return e
}

func (e *elsewhere) received() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.auth...)
}

// secretHeader is an Authorization header read from a Secret.
func secretHeader() (SecretReader, []sessionsv1alpha1.MCPHeader) {
	read := func(context.Context, *sessionsv1alpha1.Agent, *corev1.SecretKeySelector) ([]byte, error) {
		return []byte("Bearer s3cret"), nil
	}
	return read, []sessionsv1alpha1.MCPHeader{{Name: "Authorization", ValueFrom: sessionsv1alpha1.MCPHeaderSource{SecretKeyRef: corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "tok"}, Key: "header"}}}}
}

func TestTheClientStaysOnTheServersOrigin(t *testing.T) {
	cases := map[string]struct {
		// server returns the URL of a server that points the client at other.
		server func(t *testing.T, other string) string
		want   string
	}{
		"an HTTP+SSE endpoint event naming another origin": {
			server: func(t *testing.T, other string) string {
				ts := newTestServer(t, true)
				ts.AnnounceEndpointAt(other)
				return ts.URL
			},
			want: "the server named an endpoint on ",
		},
		"a 307 redirect to another origin": {
			server: func(t *testing.T, other string) string {
				ts := httptest.NewServer(http.RedirectHandler(other+"/mcp", http.StatusTemporaryRedirect))
				t.Cleanup(ts.Close)
				return ts.URL + "/mcp"
			},
			want: "the server redirected to ",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			other := newElsewhere(t)
			read, headers := secretHeader()
			p := newTestPool(t, Options{ReadSecret: read})
			set := p.Resolve(t.Context(), testAgent(1, sessionsv1alpha1.MCPServer{Name: "s", URL: tc.server(t, other.URL), Headers: headers}))

			st := set.Status()
			if len(st) != 1 || st[0].Connected || st[0].Reason != ReasonOriginRefused ||
				!strings.Contains(st[0].Message, tc.want+origin(mustURL(t, other.URL))) {
				t.Errorf("status %+v: want not connected, reason %s, a message naming %s", st, ReasonOriginRefused, other.URL)
			}
			if got := other.received(); len(got) != 0 {
				t.Errorf("the other origin received %d requests (Authorization %q)", len(got), got)
			}
		})
	}
}

func TestOrigin(t *testing.T) {
	cases := map[string]string{
		"http://Example.COM/mcp":        "http://example.com:80",
		"https://example.com./mcp":      "https://example.com:443",
		"HTTP://example.com:8080/x?y=z": "http://example.com:8080",
		"http://[::1]:9/mcp":            "http://[::1]:9",
	}
	for raw, want := range cases {
		if got := origin(mustURL(t, raw)); got != want {
			t.Errorf("origin(%s) = %s, want %s", raw, got, want)
		}
	}
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
