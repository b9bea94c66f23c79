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

package transcriptstore

import (
	"cmp"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	gocmp "github.com/google/go-cmp/cmp"

	"github.com/agent-sessions/agent-session-operator/internal/shard"
)

// The owners' addresses come from the operator's template or list, one per shard.
func TestOwnerURLs(t *testing.T) {
	for name, tc := range map[string]struct {
		in   string
		want []string
	}{
		"template": {in: "https://aso-shard-{i}.ns.svc:8090", want: []string{"https://aso-shard-0.ns.svc:8090", "https://aso-shard-1.ns.svc:8090"}},
		"list":     {in: "https://127.0.0.1:1, https://127.0.0.1:2", want: []string{"https://127.0.0.1:1", "https://127.0.0.1:2"}},
		"too few":  {in: "https://127.0.0.1:1"},
		"no host":  {in: "shard-{i}"},
	} {
		urls, err := ownerURLs(tc.in, 2)
		var got []string
		for _, u := range urls {
			got = append(got, u.String())
		}
		if diff := gocmp.Diff(tc.want, got); diff != "" || (err == nil) != (tc.want != nil) {
			t.Errorf("%s: ownerURLs(%q) = %v (-want +got):\n%s", name, tc.in, err, diff)
		}
	}
}

// Each door's requests reach the shard that owns the namespace the door acts in, through
// a real front and a real owner: shard 0's front serves its own namespace and passes
// shard 1's to shard 1, by ?namespace= for the doors that take it and by the path for
// /a2a/{namespace}/{agent}, whatever the query of an A2A request says.
func TestFrontRoutesEachDoorByItsNamespace(t *testing.T) {
	var ns0, ns1 string
	for i := 0; ns0 == "" || ns1 == ""; i++ {
		ns := fmt.Sprintf("team-%d", i)
		if shard.Of(ns, 2) == 0 {
			ns0 = cmp.Or(ns0, ns)
		} else {
			ns1 = cmp.Or(ns1, ns)
		}
	}
	served := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, name) })
	}
	owner1 := httptest.NewServer(served("shard 1"))
	defer owner1.Close()
	o, err := newOwners(FrontConfig{Shard: shard.Shard{Index: 0, Count: 2}, URLTemplate: "http://unused.invalid," + owner1.URL,
		Transport: http.DefaultTransport}, "", logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	routes := map[string]http.Handler{}
	for _, route := range append(DoorRoutes(), routesOf(signedDoors)...) {
		routes[route] = served("shard 0")
	}
	frontDoors(routes, o, ns0)
	mux, err := publicMux(routes)
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(mux)
	defer front.Close()

	type req struct{ method, path string }
	cases := map[string]struct {
		req
		want string
	}{
		"history, own":                    {req{"GET", "/sessions/agent:a:main/history?namespace=" + ns0}, "shard 0"},
		"history, the other":              {req{"GET", "/sessions/agent:a:main/history?namespace=" + ns1}, "shard 1"},
		"history, default":                {req{"GET", "/sessions/agent:a:main/history"}, "shard 0"},
		"search, the other":               {req{"GET", "/search?q=x&namespace=" + ns1}, "shard 1"},
		"events, the other":               {req{"GET", "/events?namespace=" + ns1}, "shard 1"},
		"mcp, the other":                  {req{"POST", "/mcp?namespace=" + ns1}, "shard 1"},
		"console, the other":              {req{"POST", "/console/tools/sessions_list?namespace=" + ns1}, "shard 1"},
		"a2a, own":                        {req{"POST", "/a2a/" + ns0 + "/main"}, "shard 0"},
		"a2a, the other":                  {req{"POST", "/a2a/" + ns1 + "/main"}, "shard 1"},
		"a2a card, the other":             {req{"GET", "/a2a/" + ns1 + "/main/.well-known/agent-card.json"}, "shard 1"},
		"a2a, path over query":            {req{"POST", "/a2a/" + ns1 + "/main?namespace=" + ns0}, "shard 1"},
		"a2a, query ignored":              {req{"POST", "/a2a/" + ns0 + "/main?namespace=" + ns1}, "shard 0"},
		"events subscriptions, the other": {req{"POST", "/events/s1/subscriptions?namespace=" + ns1}, "shard 1"},
		"hooks, own":                      {req{"POST", "/hooks/" + ns0 + "/ci"}, "shard 0"},
		"hooks, the other":                {req{"POST", "/hooks/" + ns1 + "/ci"}, "shard 1"},
		"hooks, query ignored":            {req{"POST", "/hooks/" + ns0 + "/ci?namespace=" + ns1}, "shard 0"},
		"hooks, no hook named":            {req{"POST", "/hooks/" + ns1}, "shard 0"},
	}
	if len(doors)+len(signedDoors) != 8 {
		t.Errorf("%d doors: give the new door's cases here", len(doors))
	}
	for name, tc := range cases {
		r, err := http.NewRequestWithContext(t.Context(), tc.method, front.URL+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if string(b) != tc.want {
			t.Errorf("%s: %s %s reached %q, want %q", name, tc.method, tc.path, b, tc.want)
		}
	}
}

// An owner's streamed answer reaches the caller whole even when the front's transport
// finishes writing the request only after the answer started: having sent the body's
// Content-Length bytes it reads the body once more to see it end, and on a loaded machine
// that read can come after the front's response headers went out (the mcpconformance
// flake). lateEnd holds that read until the caller has the headers, as a descheduled
// write loop would; the owner sends its second event once the request was written whole,
// and gives up if the front drops its connection.
func TestFrontStreamsWhenTheRequestBodyEndsLate(t *testing.T) {
	ns1 := ""
	for i := 0; ns1 == ""; i++ {
		if ns := fmt.Sprintf("team-%d", i); shard.Of(ns, 2) == 1 {
			ns1 = ns
		}
	}
	headers, wrote := make(chan struct{}), make(chan struct{})
	owner1 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			t.Errorf("owner reading the request: %v", err)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: one\n\n")
		_ = http.NewResponseController(w).Flush()
		select {
		case <-wrote:
			_, _ = io.WriteString(w, "data: two\n\n")
		case <-r.Context().Done():
		}
	}))
	defer owner1.Close()
	transport := http.DefaultTransport.(*http.Transport).Clone()
	defer transport.CloseIdleConnections()
	o, err := newOwners(FrontConfig{Shard: shard.Shard{Index: 0, Count: 2}, URLTemplate: "http://unused.invalid," + owner1.URL,
		Transport: lateEnd{next: transport, gate: headers, wrote: wrote}}, "", logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(o.front(http.NotFoundHandler(), func(r *http.Request) string { return r.URL.Query().Get("namespace") }))
	defer front.Close()

	r, err := http.NewRequestWithContext(t.Context(), "POST", front.URL+"/mcp?namespace="+ns1, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	close(headers)
	b, err := io.ReadAll(resp.Body)
	if want := "data: one\n\ndata: two\n\n"; err != nil || string(b) != want {
		t.Errorf("status %d, body %q (%v), want %q whole", resp.StatusCode, b, err, want)
	}
}

// lateEnd passes requests to next with the read after the body's declared length held
// until gate closes; wrote is closed once a request was written whole.
type lateEnd struct {
	next  http.RoundTripper
	gate  <-chan struct{}
	wrote chan<- struct{}
}

func (l lateEnd) RoundTrip(r *http.Request) (*http.Response, error) {
	var once sync.Once
	r = r.WithContext(httptrace.WithClientTrace(r.Context(), &httptrace.ClientTrace{WroteRequest: func(i httptrace.WroteRequestInfo) {
		if i.Err == nil {
			once.Do(func() { close(l.wrote) })
		}
	}}))
	if r.Body != nil {
		r.Body = &lateBody{ReadCloser: r.Body, left: r.ContentLength, gate: l.gate}
	}
	return l.next.RoundTrip(r)
}

type lateBody struct {
	io.ReadCloser
	left int64
	gate <-chan struct{}
}

func (b *lateBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		<-b.gate
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
