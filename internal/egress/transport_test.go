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

package egress

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// fixedResolver answers every name with the same addresses, as a rebinding DNS server would.
type fixedResolver []netip.Addr

func (r fixedResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return r, nil
}

func okServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func get(t *testing.T, c *http.Client, u string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer secret")
	resp, err := c.Do(req)
	if err == nil {
		t.Cleanup(func() { _ = resp.Body.Close() })
	}
	return resp, err
}

func mustParse(t *testing.T, allow ...string) *Policy {
	t.Helper()
	p, err := Parse(allow, false)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestClientRefusesLoopbackByDefault(t *testing.T) {
	srv, hits := okServer(t)
	_, err := get(t, (*Policy)(nil).Client(ClientOptions{}), srv.URL+"/v1")
	if !IsRefused(err) {
		t.Fatalf("got %v, want an egress refusal", err)
	}
	if hits.Load() != 0 {
		t.Fatal("the loopback server was reached")
	}
}

func TestClientAllowedByFlagEntries(t *testing.T) {
	srv, hits := okServer(t)
	u, _ := url.Parse(srv.URL)
	for _, entry := range []string{"127.0.0.1/32", u.Host, srv.URL + "/v1/"} {
		c := mustParse(t, entry).Client(ClientOptions{})
		resp, err := get(t, c, srv.URL+"/v1/chat")
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("allowed by %q: %v", entry, err)
		}
	}
	if hits.Load() != 3 {
		t.Fatalf("server reached %d times, want 3", hits.Load())
	}
	// A URL prefix allows its path only.
	if _, err := get(t, mustParse(t, srv.URL+"/v1/").Client(ClientOptions{}), srv.URL+"/admin"); !IsRefused(err) {
		t.Fatalf("path outside the prefix: %v, want refused", err)
	}
}

func TestDNSRebindingIsJudgedOnTheResolvedAddress(t *testing.T) {
	srv, hits := okServer(t)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	rebinding := fixedResolver{netip.MustParseAddr("127.0.0.1")}
	target := "http://models.example.com:" + port + "/v1"
	if err := (*Policy)(nil).CheckURL(target); err != nil {
		t.Fatalf("the name itself passes the URL check: %v", err)
	}
	_, err := get(t, (*Policy)(nil).Client(ClientOptions{Resolver: rebinding}), target)
	if !IsRefused(err) || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("got %v, want a loopback refusal", err)
	}
	// The operator naming the host trusts what it resolves to.
	resp, err := get(t, mustParse(t, "models.example.com").Client(ClientOptions{Resolver: rebinding}), target)
	if err != nil || resp.StatusCode != http.StatusOK || hits.Load() != 1 {
		t.Fatalf("named host: %v", err)
	}
}

func TestRedirectIsNotFollowed(t *testing.T) {
	var leaked atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Store(r.Header.Get("Authorization"))
	}))
	defer other.Close()
	redirector := httptest.NewServer(http.RedirectHandler(other.URL+"/steal", http.StatusFound))
	defer redirector.Close()
	resp, err := get(t, mustParse(t, "127.0.0.1/32").Client(ClientOptions{}), redirector.URL+"/v1")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("status %d, want the 302 itself", resp.StatusCode)
	}
	if v := leaked.Load(); v != nil {
		t.Fatalf("redirect followed, the other server got Authorization %q", v)
	}
}

// Entries that trust a name's resolution (host, URL prefix) or a range (CIDR) still never
// dial the API server: it is refused before any entry is consulted.
func TestAPIServerRefusedAtDialWhateverTheEntries(t *testing.T) {
	srv, hits := okServer(t)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	// The name resolves to the API server's address, as kubernetes.default.svc does.
	toAPIServer := fixedResolver{netip.MustParseAddr("127.0.0.1")}
	target := "http://kubernetes.default.svc:" + port + "/api"
	for _, entry := range []string{"127.0.0.0/8", "kubernetes.default.svc", "http://kubernetes.default.svc:" + port + "/"} {
		p := mustParse(t, entry)
		p.Refuse(port, netip.MustParseAddr("127.0.0.1"))
		_, err := get(t, p.Client(ClientOptions{Resolver: toAPIServer}), target)
		if !IsRefused(err) || !strings.Contains(err.Error(), "API server") {
			t.Errorf("allowed by %q: %v, want the API server refused", entry, err)
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("the API server was reached %d times", hits.Load())
	}
}

// A dev cluster runs the API server on loopback beside its models: an entry allowing
// loopback reaches the models, never the API server's port.
func TestAPIServerPortOnlyOnItsHost(t *testing.T) {
	model, hits := okServer(t)
	apiServer, apiHits := okServer(t)
	p := mustParse(t, "127.0.0.1/32")
	if err := p.RefuseAPIServer(t.Context(), fixedResolver{}, apiServer.URL); err != nil {
		t.Fatal(err)
	}
	c := p.Client(ClientOptions{})
	if resp, err := get(t, c, model.URL+"/v1"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the model beside the API server: %v", err)
	}
	if _, err := get(t, c, apiServer.URL+"/api"); !IsRefused(err) {
		t.Fatalf("the API server: %v, want refused", err)
	}
	if hits.Load() != 1 || apiHits.Load() != 0 {
		t.Fatalf("model reached %d times, API server %d", hits.Load(), apiHits.Load())
	}
}
