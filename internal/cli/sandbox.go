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
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	sandboxv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
)

func newSandboxCommand(o *options) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "sandbox KEY",
		Short: "Print a sandboxed session's sandbox: its state, claim, Pod, runtime and last use",
		Example: `  # where the main session's tools run
  kubectl sessions sandbox agent:coder:main

  # status.sandbox as JSON
  kubectl sessions sandbox agent:coder:main -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.sandbox(cmd.Context(), args[0], output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "json or yaml (default: a card)")
	return cmd
}

func (o *options) sandbox(ctx context.Context, key, output string) error {
	cl, ns, err := o.clientIn()
	if err != nil {
		return err
	}
	s, err := lookup.SessionByKey(ctx, cl, ns, key)
	if err != nil {
		return err
	}
	if s == nil {
		return fmt.Errorf("no session %q in namespace %s", key, ns)
	}
	if output != "" {
		return printAs(o.streams.Out, output, s.Status.Sandbox)
	}
	var sb *sandboxv1beta1.Sandbox
	if st := s.Status.Sandbox; st != nil && st.Sandbox != "" {
		// The Pod and node are the Sandbox's; a user who may not get Sandboxes sees the rest.
		sb = &sandboxv1beta1.Sandbox{}
		if cl.Get(ctx, types.NamespacedName{Namespace: ns, Name: st.Sandbox}, sb) != nil {
			sb = nil
		}
	}
	return printSandbox(o.streams.Out, s, sb)
}

// printSandbox writes a session's sandbox for people, one field a line.
func printSandbox(w io.Writer, s *sessionsv1alpha1.AgentSession, sb *sandboxv1beta1.Sandbox) error {
	st := s.Status.Sandbox
	if st == nil {
		state := "none: the session has made no tool call in a sandbox"
		if !s.Spec.Sandboxed {
			state = "none: the session is not sandboxed"
		}
		_, err := fmt.Fprintf(w, "Sandbox:\t%s\n", state)
		return err
	}
	pod, node := "-", "-"
	if sb != nil {
		pod = sb.Name
		if name := sb.Annotations[sandboxv1beta1.SandboxPodNameAnnotation]; name != "" {
			pod = name
		}
		if st.Phase == sessionsv1alpha1.SandboxSuspended {
			pod = "- (suspended)"
		}
		node = orDash(sb.Status.NodeName)
	}
	lastUsed := "-"
	if st.LastUsed != nil {
		lastUsed = st.LastUsed.UTC().Format(time.RFC3339)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, f := range [][2]string{
		{"State", string(st.Phase)}, {"Claim", st.Claim}, {"Sandbox", orDash(st.Sandbox)}, {"Pod", pod}, {"Node", node},
		{"Runtime", runtimeOrDefault(st.RuntimeClassName)}, {"Last used", lastUsed}, {"Message", orDash(st.Message)},
	} {
		fmt.Fprintf(tw, "%s:\t%s\n", f[0], f[1])
	}
	return tw.Flush()
}

func runtimeOrDefault(rc string) string {
	if rc == "" {
		return "the node's default"
	}
	return rc
}
