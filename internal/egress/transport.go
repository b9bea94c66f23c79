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
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Resolver looks up a host's addresses; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// ClientOptions tune the clients a Policy builds.
type ClientOptions struct {
	// Timeout bounds a whole request, body included; 0 means none (streams bound themselves).
	Timeout time.Duration
	// Resolver nil means net.DefaultResolver; tests give one that answers what they need.
	Resolver Resolver
	// ReadLimit bounds what is read of each answer (LimitBodies); the zero value bounds
	// nothing.
	ReadLimit ReadLimit
	// ExtraRootsFile, when set, is a PEM file of CAs trusted beside the system roots (the
	// operator's own CA, whose certificate its doors serve with), read again when it changes.
	ExtraRootsFile string
}

// Client returns an HTTP client for credentialed requests: every connection is judged by
// p when dialed, no proxy is used (a proxy would hide the real destination), and redirects
// are never followed: the 3xx response is returned as it is, so a server cannot bounce the
// Authorization header to another place.
func (p *Policy) Client(o ClientOptions) *http.Client {
	return &http.Client{Transport: p.Transport(o), Timeout: o.Timeout, CheckRedirect: NoRedirect}
}

// NoRedirect is a CheckRedirect that returns the redirect response instead of following it.
func NoRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// Transport returns a RoundTripper that judges each request's URL, then each dialed address.
func (p *Policy) Transport(o ClientOptions) http.RoundTripper {
	r := o.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	t := &http.Transport{
		Proxy:                 nil,
		DialContext:           p.DialContext(r),
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	if o.ExtraRootsFile != "" {
		t.TLSClientConfig = (&extraRoots{file: o.ExtraRootsFile}).tlsConfig()
	}
	var rt http.RoundTripper = &guard{p: p, next: t}
	if l := o.ReadLimit; l.Body > 0 || l.Stream > 0 || l.Event > 0 {
		rt = LimitBodies(rt, l)
	}
	return rt
}

// namedKey marks a request whose URL a prefix entry names; the value is its host:port.
type namedKey struct{}

type guard struct {
	p    *Policy
	next http.RoundTripper
}

func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	u := req.URL
	if u.Scheme != "http" && u.Scheme != "https" {
		closeBody(req)
		return nil, &Error{Host: u.Host, Reason: "scheme " + u.Scheme + " is not http(s)"}
	}
	named, err := g.p.urlNamed(u)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	if named {
		host, port := hostPort(u)
		req = req.WithContext(context.WithValue(req.Context(), namedKey{}, net.JoinHostPort(host, port)))
	}
	return g.next.RoundTrip(req)
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// DialContext returns a dial function that resolves the host itself, judges every address
// and connects only to an address it accepted, so what is judged is what is dialed.
func (p *Policy) DialContext(r Resolver) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		pn, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			return nil, &Error{Host: addr, Reason: "bad port"}
		}
		host = strings.TrimSuffix(strings.ToLower(host), ".")
		named, _ := ctx.Value(namedKey{}).(string)
		allowAll := named == net.JoinHostPort(host, port)

		var addrs []netip.Addr
		if a, err := netip.ParseAddr(host); err == nil {
			addrs = []netip.Addr{a}
		} else if addrs, err = r.LookupNetIP(ctx, "ip", host); err != nil {
			return nil, err
		}
		var errs []error
		for _, a := range addrs {
			judge := p.judge
			if allowAll {
				// A URL prefix entry trusts what its host resolves to, except the API server.
				judge = p.refusedAPIServer
			}
			if err := judge(host, port, a); err != nil {
				errs = append(errs, err)
				continue
			}
			conn, err := d.DialContext(ctx, network, netip.AddrPortFrom(a.Unmap(), uint16(pn)).String())
			if err == nil {
				return conn, nil
			}
			errs = append(errs, err)
		}
		if len(errs) == 0 {
			return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
		}
		return nil, errors.Join(errs...)
	}
}
