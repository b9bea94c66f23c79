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

// Package cli is the kubectl-sessions plugin: the session tools for people, on the same
// objects and APIs the agents use.
package cli

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/agent-sessions/agent-session-operator/internal/scheme"
)

// ExitError carries a process exit code for outcomes that are not failures of the command
// itself (a send that timed out, a run that failed).
type ExitError struct {
	Code int
	Msg  string
}

func (e *ExitError) Error() string { return e.Msg }

// options are shared by every subcommand.
type options struct {
	flags      *genericclioptions.ConfigFlags
	historyURL string
	historyCA  string
	token      string
	streams    genericiooptions.IOStreams
}

// NewCommand builds the kubectl-sessions command tree.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &options{flags: genericclioptions.NewConfigFlags(true), streams: streams}
	root := &cobra.Command{
		Use:   "kubectl-sessions",
		Short: "Send to, spawn from and read agent sessions",
		Long: `kubectl sessions drives the agent-session-operator the way agents do: it lists
sessions, reads and follows their history, sends messages into them and spawns
sub-agent runs, all as objects the admission webhook judges. It manages sessions as
the sessions tool does (patch, archive, reset, restore), each write guarded by
--expected-session-id, and a send of exactly "/send on", "/send off" or "/send inherit"
sets the session's send policy (owner-only: the verb set-send-policy).

Exit codes:
  0  done; for "policy explain", the decision was printed, allowed or denied
  1  the command failed (bad arguments, unknown session, API error, denied at admission)
  2  the send or run ended without success (status timeout or error, phase Failed)`,
		// kubectl runs the binary as a plugin: help and usage name it as people type it.
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl sessions"},
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	o.flags.AddFlags(root.PersistentFlags())
	root.PersistentFlags().StringVar(&o.historyURL, "history-url", os.Getenv("AGENT_SESSIONS_HISTORY_URL"),
		"base URL of the transcript-store history API (env AGENT_SESSIONS_HISTORY_URL)")
	root.PersistentFlags().StringVar(&o.historyCA, "history-ca-file", os.Getenv("AGENT_SESSIONS_HISTORY_CA"),
		"PEM file of the CA that signed the history API's certificate (env AGENT_SESSIONS_HISTORY_CA; default: the system roots)")
	root.PersistentFlags().StringVar(&o.token, "token-for-history", "",
		"bearer token for the history API (default: the kubeconfig user's token)")
	root.AddCommand(newListCommand(o), newHistoryCommand(o), newSearchCommand(o), newMemoryCommand(o), newSendCommand(o), newSpawnCommand(o), newCancelCommand(o), newCompactCommand(o), newPolicyCommand(o), newDeliveriesCommand(o), newUsageCommand(o), newEventsCommand(o),
		newApprovalsCommand(o), newApproveCommand(o), newDenyCommand(o), newStatusCommand(o), newSchedulesCommand(o), newHooksCommand(o), newSandboxCommand(o))
	root.AddCommand(newManageCommands(o)...)
	return root
}

func (o *options) restConfig() (*rest.Config, error) {
	cfg, err := o.flags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	return cfg, nil
}

func (o *options) client() (client.WithWatch, error) {
	cfg, err := o.restConfig()
	if err != nil {
		return nil, err
	}
	return client.NewWithWatch(cfg, client.Options{Scheme: scheme.New()})
}

// clientIn is the client and the namespace of the kubeconfig context.
func (o *options) clientIn() (client.WithWatch, string, error) {
	cl, err := o.client()
	if err != nil {
		return nil, "", err
	}
	ns, err := o.namespace()
	return cl, ns, err
}

func (o *options) namespace() (string, error) {
	ns, _, err := o.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", fmt.Errorf("namespace: %w", err)
	}
	return ns, nil
}

// bearerToken is the history API credential: the flag, else the kubeconfig user's token.
func (o *options) bearerToken() (string, error) {
	if o.token != "" {
		return o.token, nil
	}
	cfg, err := o.restConfig()
	if err != nil {
		return "", err
	}
	if cfg.BearerToken != "" {
		return cfg.BearerToken, nil
	}
	if cfg.BearerTokenFile != "" {
		b, err := os.ReadFile(cfg.BearerTokenFile)
		return string(b), err
	}
	return "", errors.New("the history API takes a bearer token and the kubeconfig user has none: pass --token-for-history (e.g. from `kubectl create token`)")
}

// historyClient trusts --history-ca-file (the local run's self-signed certificate) besides
// the system roots.
func (o *options) historyClient() (*http.Client, error) {
	if o.historyCA == "" {
		return http.DefaultClient, nil
	}
	pem, err := os.ReadFile(o.historyCA)
	if err != nil {
		return nil, fmt.Errorf("history CA: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("history CA %s holds no PEM certificate", o.historyCA)
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return &http.Client{Transport: t}, nil
}
