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
	"net/netip"
	"strings"
	"testing"
)

func TestCheckURL(t *testing.T) {
	apiServer := netip.MustParseAddr("10.96.0.1")
	cases := map[string]struct {
		allow      []string
		denyOthers bool
		// apiServerAllowed is --egress-allow-apiserver: the manager does not refuse it.
		apiServerAllowed bool
		url              string
		refused          bool
	}{
		"public name":                       {url: "https://api.openai.com/v1"},
		"public address":                    {url: "http://203.0.113.7:8000/v1"},
		"private address (in-cluster vLLM)": {url: "http://10.1.2.3:8000/v1"},
		"loopback":                          {url: "http://127.0.0.1:8080/v1", refused: true},
		"loopback elsewhere in 127/8":       {url: "http://127.9.9.9/", refused: true},
		"localhost name":                    {url: "http://localhost:8080/", refused: true},
		"IPv6 loopback":                     {url: "http://[::1]:8080/", refused: true},
		"IPv4-mapped loopback":              {url: "http://[::ffff:127.0.0.1]:8080/", refused: true},
		"metadata service":                  {url: "http://169.254.169.254/latest/meta-data/", refused: true},
		"IPv6 link-local":                   {url: "http://[fe80::1]/", refused: true},
		"unspecified":                       {url: "http://0.0.0.0:80/", refused: true},
		"the API server":                    {url: "https://10.96.0.1:443/api", refused: true},
		"not http":                          {url: "file:///etc/passwd", refused: true},
		"loopback allowed by CIDR":          {allow: []string{"127.0.0.0/8"}, url: "http://127.0.0.1:8080/v1"},
		"loopback allowed by address":       {allow: []string{"127.0.0.1"}, url: "http://127.0.0.1:8080/v1"},
		"loopback allowed by host:port":     {allow: []string{"127.0.0.1:8080"}, url: "http://127.0.0.1:8080/v1"},
		"host:port names another port":      {allow: []string{"127.0.0.1:8080"}, url: "http://127.0.0.1:9090/v1", refused: true},
		"URL prefix":                        {allow: []string{"http://127.0.0.1:8080/v1/"}, url: "http://127.0.0.1:8080/v1/chat/completions"},
		"URL prefix without slash":          {allow: []string{"http://127.0.0.1:8080/v1"}, url: "http://127.0.0.1:8080/v1/chat"},
		"URL prefix is a path boundary":     {allow: []string{"http://127.0.0.1:8080/v1"}, url: "http://127.0.0.1:8080/v10/chat", refused: true},
		"URL prefix, other path":            {allow: []string{"http://models.example/v1/"}, url: "http://models.example/admin", refused: true},
		"URL prefix, other scheme":          {allow: []string{"https://127.0.0.1:8080/"}, url: "http://127.0.0.1:8080/", refused: true},
		"strict list refuses the unnamed":   {allow: []string{"api.openai.com"}, denyOthers: true, url: "https://api.anthropic.com/", refused: true},
		"strict list allows the named":      {allow: []string{"api.openai.com"}, denyOthers: true, url: "https://API.openai.com./v1"},
		"API server behind a CIDR entry":    {allow: []string{"10.0.0.0/8"}, url: "https://10.96.0.1/api", refused: true},
		"API server named by its address":   {allow: []string{"10.96.0.1/32"}, url: "https://10.96.0.1/api", refused: true},
		"API server by host:port entry":     {allow: []string{"10.96.0.1:443"}, url: "https://10.96.0.1/api", refused: true},
		"API server by URL prefix":          {allow: []string{"https://10.96.0.1/"}, url: "https://10.96.0.1/api", refused: true},
		"API server allowed by the flag":    {apiServerAllowed: true, url: "https://10.96.0.1/api"},
		"API server by flag, strict list":   {apiServerAllowed: true, allow: []string{"10.96.0.1"}, denyOthers: true, url: "https://10.96.0.1/api"},
		"in-cluster model beside it":        {allow: []string{"10.0.0.0/8"}, denyOthers: true, url: "http://10.1.2.3:8000/v1"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, err := Parse(tc.allow, tc.denyOthers)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.apiServerAllowed {
				p.Refuse("", apiServer)
			}
			err = p.CheckURL(tc.url)
			if got := err != nil; got != tc.refused {
				t.Fatalf("CheckURL(%q) = %v, want refused=%v", tc.url, err, tc.refused)
			}
			if err != nil && !IsRefused(err) {
				t.Fatalf("error %v is not an egress refusal", err)
			}
		})
	}
}

func TestNilPolicyRefusesLoopback(t *testing.T) {
	var p *Policy
	if err := p.CheckURL("http://127.0.0.1/"); !IsRefused(err) {
		t.Fatalf("nil policy: %v, want refused", err)
	}
	if err := p.CheckURL("https://example.com/"); err != nil {
		t.Fatalf("nil policy: %v, want allowed", err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, e := range []string{"", "ftp://x/", "http://u:p@host/", "10.0.0.0/33", "http:///v1", "bad host"} {
		if _, err := Parse([]string{e}, false); err == nil {
			t.Errorf("Parse(%q) accepted", e)
		}
	}
}

func TestRefuseAPIServer(t *testing.T) {
	p := mustParse(t)
	t.Setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
	if err := p.RefuseAPIServer(context.Background(), fixedResolver{netip.MustParseAddr("192.0.2.10")}, "https://api.cluster.example:6443"); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"https://10.96.0.1/", "https://10.96.0.1:8080/", "https://192.0.2.10:6443/api"} {
		if err := p.CheckURL(u); !IsRefused(err) || !strings.Contains(err.Error(), "API server") || !strings.Contains(err.Error(), "--egress-allow-apiserver") {
			t.Errorf("CheckURL(%s) = %v, want the API server refused", u, err)
		}
	}
	// Another server on the API server's host (a node's address, or loopback in a dev
	// cluster) is not the API server: its own rules apply.
	if err := p.CheckURL("http://192.0.2.10:8000/v1"); err != nil {
		t.Errorf("another port of the API server's host: %v, want allowed", err)
	}
}
