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
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"sync"
	"time"
)

// The manager's agents may call the operator's own doors (/a2a, /mcp of another namespace
// or shard), which serve with the operator's certificate, signed by its own CA (the
// webhook's, self-signed mode). A client given that CA's file trusts it beside the system
// roots. The file is read again when it changes: the CA is made, and rotated, while the
// manager runs.

// extraRoots verifies server certificates against the system roots and the CAs of a PEM
// file.
type extraRoots struct {
	file string

	mu   sync.Mutex
	mod  time.Time
	size int64
	pool *x509.CertPool
}

// verify is a tls.Config VerifyConnection: the whole chain against the roots, for the
// name dialled, as crypto/tls verifies it by default.
func (e *extraRoots) verify(cs tls.ConnectionState) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("tls: the server sent no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{DNSName: cs.ServerName, Roots: e.roots(), Intermediates: inter})
	return err
}

// roots are the system roots with the file's CAs, the file read again when it changed;
// the system roots alone while it cannot be read.
func (e *extraRoots) roots() *x509.CertPool {
	e.mu.Lock()
	defer e.mu.Unlock()
	st, err := os.Stat(e.file)
	if err == nil && e.pool != nil && st.ModTime().Equal(e.mod) && st.Size() == e.size {
		return e.pool
	}
	pool, serr := x509.SystemCertPool()
	if serr != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if err == nil {
		if pem, rerr := os.ReadFile(e.file); rerr == nil && pool.AppendCertsFromPEM(pem) {
			e.mod, e.size = st.ModTime(), st.Size()
			e.pool = pool
			return pool
		}
	}
	// Not there yet (the CA is being made): not cached, so the next handshake reads again.
	return pool
}

// tlsConfig is the client TLS configuration that trusts file's CAs beside the system roots.
func (e *extraRoots) tlsConfig() *tls.Config {
	// InsecureSkipVerify only moves verification into VerifyConnection, which verifies the
	// chain and the name as the default would, with the extra roots.
	return &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true, VerifyConnection: e.verify} //nolint:gosec // verified in VerifyConnection
}
