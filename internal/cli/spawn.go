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
	"fmt"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func newSpawnCommand(o *options) *cobra.Command {
	var run v1.SubagentRunSpec
	var wait bool
	cmd := &cobra.Command{
		Use:   "spawn --agent ID TASK",
		Short: "Spawn a sub-agent run; with --wait, follow it until its announce",
		Example: `  # spawn a research run for the main session and wait for the announce
  kubectl sessions spawn --agent research --requester agent:main:main --wait "three facts about llamas"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			run.Task = args[0]
			return o.spawn(cmd, run, wait)
		},
	}
	f := cmd.Flags()
	f.StringVar(&run.AgentID, "agent", "", "agent id to run under")
	f.StringVar(&run.RequesterSessionKey, "requester", "", "session the result is announced to")
	f.StringVar(&run.Label, "label", "", "label for logs and UIs")
	f.StringVar(&run.Model, "model", "", "model override (must be in the Agent's allowedModels)")
	f.StringVar((*string)(&run.Cleanup), "cleanup", "", "delete or keep the child session after the announce")
	f.BoolVar(&wait, "wait", false, "wait until the run and its announce are done")
	return cmd
}

func (o *options) spawn(cmd *cobra.Command, spec v1.SubagentRunSpec, wait bool) error {
	cl, ns, err := o.clientIn()
	if err != nil {
		return err
	}
	run := &v1.SubagentRun{ObjectMeta: metav1.ObjectMeta{GenerateName: "spawn-", Namespace: ns}, Spec: spec}
	if err := cl.Create(cmd.Context(), run); err != nil {
		return err
	}
	out := o.streams.Out
	fmt.Fprintf(out, "subagentrun/%s accepted\n", run.Name)
	if !wait {
		return nil
	}
	run, err = waitFor(cmd.Context(), cl, run, &v1.SubagentRunList{}, func(r *v1.SubagentRun) bool {
		return v1.Finished(r.Status.Conditions)
	})
	if err != nil {
		return fmt.Errorf("subagentrun/%s: %w", run.Name, err)
	}
	fmt.Fprintf(out, "phase:  %s\nchild:  %s\nresult: %s\n", run.Status.Phase, run.Status.ChildSessionKey, run.Status.Result)
	if a := run.Status.Announce; a != nil {
		fmt.Fprintf(out, "announce: %s %s\n", a.Status, a.Reason)
	}
	if run.Status.Phase != v1.RunSucceeded {
		return &ExitError{Code: 2, Msg: fmt.Sprintf("subagentrun/%s ended in phase %s: %s", run.Name, run.Status.Phase, run.Status.Notes)}
	}
	return nil
}
