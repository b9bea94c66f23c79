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
	"math"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func newSpawnCommand(o *options) *cobra.Command {
	var f spawnFlags
	var wait bool
	cmd := &cobra.Command{
		Use:   "spawn --agent ID TASK",
		Short: "Spawn a sub-agent run; with --wait, follow it until its announce",
		Example: `  # spawn a research run for the main session and wait for the announce
  kubectl sessions spawn --agent research --requester agent:main:main --wait "three facts about llamas"

  # a thread-bound session that stays, with two files in its workspace and at most 10 minutes per run
  kubectl sessions spawn --agent research --thread --mode session --run-timeout 10m \
    --attach notes.md --attach chart.png "summarise the notes and the chart"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec, err := f.spec(args[0])
			if err != nil {
				return err
			}
			return o.spawn(cmd, spec, wait)
		},
	}
	f.add(cmd)
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the run and its announce are done")
	return cmd
}

// spawnFlags are the spawn command's flags for the SubagentRun spec. Values are passed on
// as given: the admission webhook judges them (allowed thinking levels, modes, sizes).
type spawnFlags struct {
	run        sessionsv1alpha1.SubagentRunSpec
	runTimeout string
	attach     []string
}

func (f *spawnFlags) add(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.run.AgentID, "agent", "", "agent id to run under")
	fs.StringVar(&f.run.RequesterSessionKey, "requester", "", "session the result is announced to")
	fs.StringVar(&f.run.Label, "label", "", "label for logs and UIs")
	fs.StringVar(&f.run.Model, "model", "", "model override (any, unless the Agent's allowedModels narrows the choice)")
	fs.StringVar((*string)(&f.run.Thinking), "thinking", "", "thinking level override (off, minimal, low, medium, high, xhigh)")
	fs.BoolVar(&f.run.Thread, "thread", false, "thread-bound routing where the channel supports it")
	fs.StringVar((*string)(&f.run.Mode), "mode", "", "run (one task) or session (stays; needs --thread); default session with --thread, else run")
	fs.StringVar((*string)(&f.run.Sandbox), "sandbox", "", "inherit (the requester's sandbox setting) or require (refuse unless the child runs sandboxed)")
	fs.StringVar(&f.runTimeout, "run-timeout", "", "abort the run after this long (90s, 10m, or seconds); 0 = no limit; default the Agent's")
	fs.StringVar((*string)(&f.run.Cleanup), "cleanup", "", "delete or keep the child session after the announce")
	fs.StringArrayVar(&f.attach, "attach", nil, "put FILE in the child's workspace (repeat for several); text as utf8, else base64")
}

// spec is the SubagentRun spec the flags ask for, with task.
func (f *spawnFlags) spec(task string) (sessionsv1alpha1.SubagentRunSpec, error) {
	spec := f.run
	spec.Task = task
	if f.runTimeout != "" {
		secs, err := seconds(f.runTimeout)
		if err != nil {
			return spec, fmt.Errorf("--run-timeout: %w", err)
		}
		spec.RunTimeoutSeconds = &secs
	}
	for _, path := range f.attach {
		a, err := readAttachment(path)
		if err != nil {
			return spec, err
		}
		spec.Attachments = append(spec.Attachments, a)
	}
	return spec, nil
}

// seconds reads a duration (90s, 10m) or a bare number of seconds, in whole seconds.
func seconds(s string) (int32, error) {
	if n, err := strconv.ParseInt(s, 10, 32); err == nil {
		if n < 0 {
			return 0, fmt.Errorf("%q is negative", s)
		}
		return int32(n), nil
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%q: want a duration such as 90s or 10m, or a number of seconds", s)
	case d < 0:
		return 0, fmt.Errorf("%q is negative", s)
	case d%time.Second != 0:
		return 0, fmt.Errorf("%q is not a whole number of seconds", s)
	case d/time.Second > math.MaxInt32:
		return 0, fmt.Errorf("%q is too long", s)
	}
	return int32(d / time.Second), nil
}

func (o *options) spawn(cmd *cobra.Command, spec sessionsv1alpha1.SubagentRunSpec, wait bool) error {
	cl, ns, err := o.clientIn()
	if err != nil {
		return err
	}
	run := &sessionsv1alpha1.SubagentRun{ObjectMeta: metav1.ObjectMeta{GenerateName: "spawn-", Namespace: ns}, Spec: spec}
	if err := cl.Create(cmd.Context(), run); err != nil {
		return err
	}
	out := o.streams.Out
	fmt.Fprintf(out, "subagentrun/%s accepted\n", run.Name)
	if !wait {
		return nil
	}
	run, err = waitFor(cmd.Context(), cl, run, &sessionsv1alpha1.SubagentRunList{}, func(r *sessionsv1alpha1.SubagentRun) bool {
		return sessionsv1alpha1.Finished(r.Status.Conditions)
	})
	if err != nil {
		return fmt.Errorf("subagentrun/%s: %w", run.Name, err)
	}
	fmt.Fprintf(out, "phase:  %s\nchild:  %s\nresult: %s\n", run.Status.Phase, run.Status.ChildSessionKey, run.Status.Result)
	if a := run.Status.Announce; a != nil {
		fmt.Fprintf(out, "announce: %s %s\n", a.Status, a.Reason)
	}
	if run.Status.Phase != sessionsv1alpha1.RunSucceeded {
		return &ExitError{Code: 2, Msg: fmt.Sprintf("subagentrun/%s ended in phase %s: %s", run.Name, run.Status.Phase, run.Status.Notes)}
	}
	return nil
}
