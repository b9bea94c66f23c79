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
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-logr/logr"

	"github.com/agent-sessions/agent-session-operator/internal/shard"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// FrontConfig makes every transcript-store of a sharded install answer for every shard
// (docs/operations/scaling.md): a request for a namespace another shard owns is passed to that shard's
// Service with the caller's token, and the owner authenticates and authorizes it as usual,
// so passing it on grants nothing.
type FrontConfig struct {
	Shard shard.Shard
	// URLTemplate is the owner's public address with "{i}" for the shard index, e.g.
	// https://agent-session-operator-shard-{i}.agents-system.svc:8090, or the n addresses
	// by index, comma-separated: operator configuration; nothing of a request but the shard
	// index its namespace hashes to chooses the address.
	URLTemplate string
	// Transport reaches the owners (nil: TLS with RootCAs from CAFile, names checked
	// against ServerName when set). Without a CAFile, the store's own serving certificate
	// directory's ca.crt, or its tls.crt, is trusted: every shard serves one certificate.
	Transport  http.RoundTripper
	CAFile     string
	ServerName string
}

// hopHeader marks a request a front passed on: an owner that does not own its namespace
// either (shards disagree about n during a change) answers 502 rather than passing it on
// again. A client that sets it only loses the front.
const hopHeader = "X-Agent-Sessions-Shard-Hop"

// owners are the fronts' targets, one per shard; nil when the install is not sharded.
type owners struct {
	self  shard.Shard
	proxy []*httputil.ReverseProxy
}

func newOwners(c FrontConfig, certDir string, log logr.Logger) (*owners, error) {
	if !c.Shard.Sharded() {
		return nil, nil
	}
	if c.CAFile == "" && certDir != "" {
		c.CAFile = filepath.Join(certDir, "ca.crt")
		if _, err := os.Stat(c.CAFile); err != nil {
			c.CAFile = filepath.Join(certDir, "tls.crt")
		}
	}
	urls, err := ownerURLs(c.URLTemplate, c.Shard.Count)
	if err != nil {
		return nil, err
	}
	rt := c.Transport
	if rt == nil {
		if rt, err = ownerTransport(c.CAFile, c.ServerName); err != nil {
			return nil, err
		}
	}
	o := &owners{self: c.Shard, proxy: make([]*httputil.ReverseProxy, c.Shard.Count)}
	for i, target := range urls {
		o.proxy[i] = &httputil.ReverseProxy{
			Rewrite: func(pr *httputil.ProxyRequest) {
				host := pr.In.Host
				pr.SetURL(target)
				pr.Out.Host = host // the owner checks the Host and Origin the caller sent (MCP)
				pr.Out.Header.Set(hopHeader, strconv.Itoa(c.Shard.Index))
			},
			Transport: rt,
			// Streams (SSE, MCP's streamable HTTP) pass through as they are written.
			FlushInterval: -1,
			ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
				log.Info("shard owner unreachable", "shard", i, "path", r.URL.Path, "error", err.Error())
				writeError(w, http.StatusBadGateway, transcript.ErrTypeUnavailable,
					fmt.Sprintf("the transcript-store of shard %d, which owns this namespace, did not answer; try again", i))
			},
		}
	}
	return o, nil
}

// ownerURLs are the n owners' addresses: the template with {i} replaced, or the list.
func ownerURLs(template string, n int) ([]*url.URL, error) {
	raw := strings.Split(template, ",")
	if strings.Contains(template, "{i}") {
		raw = make([]string, n)
		for i := range raw {
			raw[i] = strings.ReplaceAll(template, "{i}", strconv.Itoa(i))
		}
	}
	if len(raw) != n {
		return nil, fmt.Errorf("shard front: %q names %d owners, want a template with {i} or %d addresses", template, len(raw), n)
	}
	urls := make([]*url.URL, n)
	for i, r := range raw {
		u, err := url.Parse(strings.TrimSpace(r))
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("shard front: owner %d's URL %q: want scheme://host[:port]", i, r)
		}
		urls[i] = u
	}
	return urls, nil
}

// front serves next for the namespaces this shard owns and passes the others' requests to
// their owner; namespace is the one a request acts in, as its door declares it (routes.go),
// "" for none (served here: the door answers it).
func (o *owners) front(next http.Handler, namespace func(*http.Request) string) http.Handler {
	if o == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ns := namespace(r)
		if ns == "" || o.self.Owns(ns) {
			next.ServeHTTP(w, r)
			return
		}
		if r.Header.Get(hopHeader) != "" {
			writeError(w, http.StatusBadGateway, transcript.ErrTypeUnavailable,
				"passed on by another shard's front, but this shard does not own the namespace either: the shards disagree about their count")
			return
		}
		// The owner may answer before the transport has finished writing the request: having
		// sent Content-Length bytes, it reads the body once more to see it end. An HTTP/1
		// server drains and closes a request's body when its response starts, so that last
		// read could fail, and the transport then closes the owner's connection with the
		// answer still streaming: the caller got a 200 cut short (golang/go#40747). In full
		// duplex the body stays open until this handler returns. An HTTP/2 request always
		// is, and the ErrNotSupported it gets then needs nothing done.
		_ = http.NewResponseController(w).EnableFullDuplex()
		o.proxy[shard.Of(ns, o.self.Count)].ServeHTTP(w, r)
	})
}

// ownerTransport reaches the owners over TLS, trusting caFile's certificates (empty: the
// system's) and checking serverName when set (every shard serves one certificate).
func ownerTransport(caFile, serverName string) (http.RoundTripper, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: serverName}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("shard front: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("shard front: no certificate in %s", caFile)
		}
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = cfg
	return t, nil
}
