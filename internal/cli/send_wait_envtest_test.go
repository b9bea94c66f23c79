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

package cli

import (
	"bytes"
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// shortWatches makes the API server end every watch after a second, as its own watch
// timeout, a restart or a dropped connection would, and counts the watches made.
type shortWatches struct {
	next    http.RoundTripper
	watches *atomic.Int32
}

func (s shortWatches) RoundTrip(r *http.Request) (*http.Response, error) {
	if q := r.URL.Query(); q.Get("watch") == "true" {
		s.watches.Add(1)
		q.Set("timeoutSeconds", "1")
		r = r.Clone(r.Context())
		r.URL.RawQuery = q.Encode()
	}
	return s.next.RoundTrip(r)
}

// Against a real API server whose watches end every second: send waits through several
// watches and still prints the reply the operator writes after they ended.
func TestSendWaitOutlivesItsWatches(t *testing.T) {
	cfg, admin := testenv.StartT(t)
	ctx, cancel := context.WithTimeout(t.Context(), testenv.Timeout*4)
	defer cancel()
	if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}); err != nil {
		t.Fatal(err)
	}
	watches := &atomic.Int32{}
	var out bytes.Buffer
	o := &options{flags: kubeconfigFlags(t, cfg), streams: genericiooptions.IOStreams{Out: &out, ErrOut: &out}}
	o.flags.WrapConfigFn = func(c *rest.Config) *rest.Config {
		c.Wrap(func(rt http.RoundTripper) http.RoundTripper { return shortWatches{next: rt, watches: watches} })
		return c
	}
	cmd := &cobra.Command{}
	cmd.SetContext(ctx)
	sent := make(chan error, 1)
	go func() { sent <- o.send(cmd, "agent:main:main", "ping", 30, "") }()

	// Once the first two watches have ended, the "operator" replies.
	var send sessionsv1alpha1.SessionSend
	for watches.Load() < 3 || send.Name == "" {
		select {
		case err := <-sent:
			t.Fatalf("send returned before the reply: %v (after %d watches)", err, watches.Load())
		case <-ctx.Done():
			t.Fatalf("%d watches, want 3", watches.Load())
		case <-time.After(testenv.Interval):
		}
		var sends sessionsv1alpha1.SessionSendList
		if err := admin.List(ctx, &sends, client.InNamespace("team")); err != nil {
			t.Fatal(err)
		}
		if len(sends.Items) == 1 {
			send = sends.Items[0]
		}
	}
	send.Status.Status, send.Status.Reply = sessionsv1alpha1.SendOK, "pong"
	if err := admin.Status().Update(ctx, &send); err != nil {
		t.Fatal(err)
	}
	if err := <-sent; err != nil {
		t.Fatalf("send: %v", err)
	}
	if got := strings.TrimSpace(out.String()); got != "pong" {
		t.Fatalf("printed %q, want pong", got)
	}
}

// kubeconfigFlags are the plugin's flags for a kubeconfig file of cfg, in namespace team.
func kubeconfigFlags(t *testing.T, cfg *rest.Config) *genericclioptions.ConfigFlags {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin", Namespace: "team"}
	kc.CurrentContext = "envtest"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	f := genericclioptions.NewConfigFlags(true)
	f.KubeConfig = &path
	return f
}
