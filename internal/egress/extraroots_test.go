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
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExtraRootsFile: a client given a CA file trusts servers it signed (once the file is
// there, read again when it appears), still checks the name, and trusts nothing more.
func TestExtraRootsFile(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	defer srv.Close()
	p, err := Parse([]string{"127.0.0.1/32"}, false)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "ca.crt")
	get := func(c *http.Client, url string) error {
		resp, err := c.Get(url)
		if err == nil {
			_ = resp.Body.Close()
		}
		return err
	}
	with := p.Client(ClientOptions{ExtraRootsFile: file})
	without := p.Client(ClientOptions{})
	if err := get(with, srv.URL); err == nil || !strings.Contains(err.Error(), "unknown authority") {
		t.Errorf("before the CA file is there: %v, want an unknown authority", err)
	}
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := get(with, srv.URL); err != nil {
		t.Errorf("with the CA file: %v", err)
	}
	if err := get(without, srv.URL); err == nil {
		t.Error("a client without the CA file trusted the server")
	}
	// The certificate names example.com and 127.0.0.1, not localhost.
	if err := get(with, strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)); err == nil || !strings.Contains(err.Error(), "localhost") {
		t.Errorf("a name the certificate does not hold: %v, want refused", err)
	}
}
