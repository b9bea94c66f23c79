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
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// The client of one MCP server talks only to the origin (scheme, host, port) of the URL the
// Agent names. A server may otherwise move the manager elsewhere: the older HTTP+SSE
// transport's `endpoint` event names the URL the client POSTs to, and any response may be a
// redirect. Either would carry the headers (Secrets) to a host nobody configured and whose
// URL nobody judged.

// OriginError is a request the client refused because it would leave the server's origin.
type OriginError struct {
	// Configured is the server's origin, Requested the one it pointed the client at.
	Configured, Requested string
	// Redirect says the server answered with a redirect (else it named an endpoint).
	Redirect bool
}

func (e *OriginError) Error() string {
	if e.Redirect {
		return fmt.Sprintf("the server redirected to %s: redirects are not followed (the client talks only to %s)", e.Requested, e.Configured)
	}
	return fmt.Sprintf("the server named an endpoint on %s: refused (the client talks only to %s)", e.Requested, e.Configured)
}

// origin is u's scheme://host:port, lower-case, with the scheme's default port filled in.
func origin(u *url.URL) string {
	host, port := strings.TrimSuffix(strings.ToLower(u.Hostname()), "."), u.Port()
	if port == "" {
		port = "80"
		if strings.EqualFold(u.Scheme, "https") {
			port = "443"
		}
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return strings.ToLower(u.Scheme) + "://" + host + ":" + port
}

// originTransport refuses a request to any origin but the server's, before it leaves, and
// adds the configured headers to the requests it lets through.
type originTransport struct {
	base    http.RoundTripper
	origin  string
	headers http.Header
}

func (t originTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if o := origin(r.URL); o != t.origin {
		if r.Body != nil {
			_ = r.Body.Close()
		}
		return nil, &OriginError{Configured: t.origin, Requested: o}
	}
	if len(t.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header[k] = v
		}
	}
	return t.base.RoundTrip(r)
}

// OriginClient is the client of a remote at serverURL that talks only to its origin and
// sends headers with every request (httpClient), for the manager's other remote tools.
func OriginClient(base http.RoundTripper, serverURL *url.URL, headers http.Header) *http.Client {
	return httpClient(base, serverURL, headers)
}

// SameOrigin says whether a and b have one origin (scheme, host, port).
func SameOrigin(a, b *url.URL) bool { return origin(a) == origin(b) }

// httpClient is the client of the server at serverURL. No redirect is followed, to the same
// origin or another: the refusal names where it pointed, so the Agent says why.
func httpClient(base http.RoundTripper, serverURL *url.URL, headers http.Header) *http.Client {
	o := origin(serverURL)
	return &http.Client{
		Transport: originTransport{base: base, origin: o, headers: headers},
		CheckRedirect: func(req *http.Request, _ []*http.Request) error {
			return &OriginError{Configured: o, Requested: origin(req.URL), Redirect: true}
		},
	}
}
