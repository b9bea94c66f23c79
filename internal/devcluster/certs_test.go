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

package devcluster

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The doors and the webhooks serve one certificate that the local CA signed, and a client
// trusting only ca.crt (what the manager adds to the system roots for its agents' A2A and
// MCP tools) reaches them by every loopback name; a client trusting nothing of it does not.
func TestServingCertsTrustedByTheirCA(t *testing.T) {
	c := &Cluster{opts: Options{StateDir: t.TempDir()}}
	dir, err := c.writeServingCerts("127.0.0.2")
	if err != nil {
		t.Fatal(err)
	}
	if c.HistoryCAFile != filepath.Join(dir, "ca.crt") {
		t.Fatalf("HistoryCAFile = %s, want ca.crt of %s", c.HistoryCAFile, dir)
	}
	again, err := c.writeServingCerts()
	if err != nil || again != dir {
		t.Fatalf("a second pair got %q, %v: want the one directory %q", again, err, dir)
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	defer srv.Close()
	ca, err := os.ReadFile(c.HistoryCAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		t.Fatal("no certificate in ca.crt")
	}
	_, port, _ := strings.Cut(srv.Listener.Addr().String(), ":")
	trusting := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	for _, host := range []string{"127.0.0.1", "localhost"} {
		resp, err := trusting.Get("https://" + host + ":" + port + "/")
		if err != nil {
			t.Fatalf("%s: %v", host, err)
		}
		_ = resp.Body.Close()
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := leaf.VerifyHostname("127.0.0.2"); err != nil {
		t.Errorf("the webhooks' host: %v", err)
	}
	if leaf.IsCA {
		t.Error("the serving certificate is a CA")
	}
	stranger := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: x509.NewCertPool(), MinVersion: tls.VersionTLS12}}}
	if resp, err := stranger.Get(srv.URL); err == nil {
		_ = resp.Body.Close()
		t.Fatal("a client without the local CA trusted the serving certificate")
	}
}
