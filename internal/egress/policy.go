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

// Package egress decides where the manager may open outbound connections that carry
// credentials: model provider base URLs, announce sinks and MCP servers. A namespace user
// chooses those URLs, so without a check they could point the manager, and the API key or
// sink token it sends, at the Pod's own loopback, the node's metadata service or the
// Kubernetes API server.
//
// The check runs when a connection is dialed, on the address the name resolved to, so a
// name that resolves to a public address at admission and to 127.0.0.1 later (DNS
// rebinding) is refused as well.
package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strings"
)

// Policy is an operator's egress allow list. The zero value (and nil) refuses loopback,
// link-local and unspecified addresses and allows every other address.
type Policy struct {
	cidrs    []netip.Prefix
	hosts    []hostRule
	prefixes []*url.URL
	// refused are the API server's endpoints, refused whatever the entries say.
	refused []refusal
	// denyOthers refuses every destination no entry allows.
	denyOthers bool
}

// refusal is an address refused on one port ("" is every port).
type refusal struct {
	addr netip.Addr
	port string
}

// hostRule allows a host name (or literal address) as it appears in a URL; port "" is any.
type hostRule struct{ host, port string }

// Parse reads allow list entries, each a CIDR or single address ("10.0.0.0/8",
// "127.0.0.1"), a host with an optional port ("ollama.models.svc:11434"), or a URL prefix
// ("https://api.example.com/v1/"). denyOthers makes the list strict: a destination no
// entry names is refused even when its address is an ordinary one.
func Parse(entries []string, denyOthers bool) (*Policy, error) {
	p := &Policy{denyOthers: denyOthers}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if err := p.add(e); err != nil {
			return nil, fmt.Errorf("egress allow entry %q: %w", e, err)
		}
	}
	return p, nil
}

func (p *Policy) add(e string) error {
	switch {
	case e == "":
		return errors.New("empty")
	case strings.Contains(e, "://"):
		u, err := url.Parse(e)
		if err != nil {
			return err
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return errors.New("a URL prefix is http(s)://host[:port][/path] with no user, query or fragment")
		}
		u.Host = strings.ToLower(u.Host)
		p.prefixes = append(p.prefixes, u)
	case strings.Contains(e, "/"):
		pfx, err := netip.ParsePrefix(e)
		if err != nil {
			return err
		}
		p.cidrs = append(p.cidrs, pfx.Masked())
	default:
		if a, err := netip.ParseAddr(e); err == nil {
			p.cidrs = append(p.cidrs, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			return nil
		}
		host, port := e, ""
		if h, pt, err := net.SplitHostPort(e); err == nil {
			host, port = h, pt
		}
		host = strings.TrimSuffix(strings.ToLower(host), ".")
		if host == "" || strings.ContainsAny(host, " @?#") {
			return errors.New("not a CIDR, address, host[:port] or URL prefix")
		}
		p.hosts = append(p.hosts, hostRule{host: host, port: port})
	}
	return nil
}

// Refuse adds addresses refused on port ("" is every port) whatever the entries say: the
// manager passes the cluster's API server here. An allow entry meant for in-cluster models
// (10.0.0.0/8, a URL prefix on a Service name) must not re-open it; an operator who wants
// it reachable does not refuse it (--egress-allow-apiserver). The port keeps other servers
// on the API server's address (a node's, or 127.0.0.1 in a dev cluster) allowable.
func (p *Policy) Refuse(port string, addrs ...netip.Addr) {
	for _, a := range addrs {
		p.refused = append(p.refused, refusal{addr: a.Unmap(), port: port})
	}
}

// Error is a refused destination. Its text says which address was refused, why, and the
// flag that would allow it.
type Error struct {
	Host, Reason string
	// apiServer marks the API server's refusal, which no allow entry lifts.
	apiServer bool
}

func (e *Error) Error() string {
	flag := "--egress-allow"
	if e.apiServer {
		flag = "--egress-allow-apiserver"
	}
	return fmt.Sprintf("egress to %s refused: %s (an operator may allow it with %s)", e.Host, e.Reason, flag)
}

// IsRefused tells whether err (or an error it wraps) is an egress refusal.
func IsRefused(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// CheckURL judges a URL before any connection: its scheme, a URL prefix or host entry that
// names it, and a literal address in it. A host name passes here and is judged again, on
// its resolved addresses, when dialed; webhooks and controllers use CheckURL to refuse early
// and say why.
func (p *Policy) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &Error{Host: raw, Reason: "not an http(s) URL"}
	}
	host, port := hostPort(u)
	literal, lerr := netip.ParseAddr(host)
	if lerr == nil {
		if err := p.refusedAPIServer(host, port, literal); err != nil {
			return err
		}
	}
	named, err := p.urlNamed(u)
	if err != nil || named {
		return err
	}
	if lerr == nil {
		return p.judge(host, port, literal)
	}
	if p.hostNamed(host, port) {
		return nil
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return &Error{Host: u.Host, Reason: "loopback name"}
	}
	if p != nil && p.denyOthers {
		return &Error{Host: u.Host, Reason: "not on the egress allow list"}
	}
	return nil
}

// urlNamed tells whether a URL prefix entry names u. A URL whose host and port a prefix
// entry has, under another path, is refused: the operator allowed that server for one path.
func (p *Policy) urlNamed(u *url.URL) (bool, error) {
	if p == nil {
		return false, nil
	}
	host, port := hostPort(u)
	sameServer := false
	for _, pfx := range p.prefixes {
		ph, pp := hostPort(pfx)
		if u.Scheme != pfx.Scheme || ph != host || pp != port {
			continue
		}
		if underPath(u.EscapedPath(), pfx.EscapedPath()) {
			return true, nil
		}
		sameServer = true
	}
	if sameServer && !p.hostNamed(host, port) {
		return false, &Error{Host: u.Host, Reason: "path " + u.EscapedPath() + " is not under an allowed URL prefix"}
	}
	return false, nil
}

func underPath(path, prefix string) bool {
	if prefix == "" || prefix == "/" {
		return true
	}
	if !strings.HasPrefix(path, prefix) {
		return false
	}
	return strings.HasSuffix(prefix, "/") || len(path) == len(prefix) || path[len(prefix)] == '/'
}

// hostNamed tells whether a host entry names host:port.
func (p *Policy) hostNamed(host, port string) bool {
	if p == nil {
		return false
	}
	for _, h := range p.hosts {
		if h.host == host && (h.port == "" || h.port == port) {
			return true
		}
	}
	return false
}

// judge decides one resolved address of host:port that no URL prefix entry named. The API
// server is refused before any entry is consulted.
func (p *Policy) judge(host, port string, a netip.Addr) error {
	a = a.Unmap()
	if err := p.refusedAPIServer(host, port, a); err != nil {
		return err
	}
	if p.hostNamed(host, port) {
		return nil
	}
	if p != nil {
		for _, c := range p.cidrs {
			if c.Contains(a) {
				return nil
			}
		}
	}
	if reason := special(a); reason != "" {
		return &Error{Host: where(host, port, a), Reason: reason}
	}
	if p != nil && p.denyOthers {
		return &Error{Host: where(host, port, a), Reason: "not on the egress allow list"}
	}
	return nil
}

// refusedAPIServer refuses an address of the cluster's API server, whatever the entries.
func (p *Policy) refusedAPIServer(host, port string, a netip.Addr) error {
	if p == nil {
		return nil
	}
	a = a.Unmap()
	for _, r := range p.refused {
		if r.addr == a && (r.port == "" || r.port == port) {
			return &Error{Host: where(host, port, a), Reason: "the cluster's API server", apiServer: true}
		}
	}
	return nil
}

// where names a destination for an error: host:port, and the address a name resolved to.
func where(host, port string, a netip.Addr) string {
	w := net.JoinHostPort(host, port)
	if host != a.String() {
		w += " (" + a.String() + ")"
	}
	return w
}

// special names the address classes refused by default.
func special(a netip.Addr) string {
	switch {
	case a.IsLoopback():
		return "loopback address"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return "link-local address (cloud metadata services live here)"
	case a.IsUnspecified():
		return "unspecified address"
	case a.IsMulticast():
		return "multicast address"
	}
	return ""
}

// hostPort is u's lower-case host and its port, the scheme's default when none is given.
func hostPort(u *url.URL) (string, string) {
	host, port := strings.TrimSuffix(strings.ToLower(u.Hostname()), "."), u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return host, port
}

// RefuseAPIServer refuses the cluster's API server: the host and port of the manager's own
// client config (an address or a name, resolved now) and, in a Pod, the kubernetes Service
// address on every port (a virtual IP of the API server alone). The manager's credentials
// never go there on a user's behalf, and a user's URL must not reach it with the manager's
// network position.
func (p *Policy) RefuseAPIServer(ctx context.Context, r Resolver, apiHost string) error {
	type endpoint struct{ host, port string }
	eps := []endpoint{{host: os.Getenv("KUBERNETES_SERVICE_HOST")}}
	if u, err := url.Parse(apiHost); err == nil && u.Host != "" {
		h, port := hostPort(u)
		eps = append(eps, endpoint{h, port})
	} else if h, port, err := net.SplitHostPort(apiHost); err == nil {
		eps = append(eps, endpoint{h, port})
	}
	for _, e := range eps {
		if e.host == "" {
			continue
		}
		if a, err := netip.ParseAddr(e.host); err == nil {
			p.Refuse(e.port, a)
			continue
		}
		addrs, err := r.LookupNetIP(ctx, "ip", e.host)
		if err != nil {
			return fmt.Errorf("resolving the API server %s: %w", e.host, err)
		}
		p.Refuse(e.port, addrs...)
	}
	return nil
}
