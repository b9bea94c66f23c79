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
	"cmp"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/duration"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
)

// maxArgumentsColumn bounds the arguments a table row shows; -o yaml on the object shows all.
const maxArgumentsColumn = 60

// maxAsksColumn bounds what a budget's row shows of its ask: the whole sentence, as a rule.
const maxAsksColumn = 160

func newApprovalsCommand(o *options) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "approvals",
		Short: "List the tool calls and budgets that wait for a person's decision, oldest first",
		Example: `  # what waits in this namespace
  kubectl sessions approvals

  # everywhere you may list ToolApprovals
  kubectl sessions approvals -A`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cl, ns, err := o.clientIn()
			if err != nil {
				return err
			}
			if all {
				ns = ""
			}
			pending, err := sessiontools.PendingApprovals(cmd.Context(), cl, ns)
			if err != nil {
				return err
			}
			return printApprovals(o.streams.Out, pending, all, time.Now())
		},
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "list the pending approvals of every namespace")
	return cmd
}

// printApprovals is the table of what waits: a tool call shows its tool and arguments, a
// budget (KIND Budget) what it asks in the ARGUMENTS column's place.
func printApprovals(w io.Writer, pending []sessionsv1alpha1.ToolApproval, all bool, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if all {
		fmt.Fprint(tw, "NAMESPACE\t")
	}
	fmt.Fprintln(tw, "NAME\tKIND\tTOOL\tSESSION\tOWNER\tAGE\tEXPIRES IN\tARGUMENTS")
	for _, ta := range pending {
		if all {
			fmt.Fprintf(tw, "%s\t", ta.Namespace)
		}
		kind, tool, what := cmp.Or(string(ta.Spec.Kind), string(sessionsv1alpha1.ApprovalKindTool)), cmp.Or(ta.Spec.Tool, "-"),
			textutil.Truncate(ta.Spec.Arguments, maxArgumentsColumn)
		if ta.Spec.IsBudget() {
			what = textutil.Truncate(ta.Spec.Budget.Message, maxAsksColumn)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s/%s\t%s\t%s\t%s\n", ta.Name, kind, tool, ta.Spec.SessionKey, ta.Spec.Owner.Kind, ta.Spec.Owner.Name,
			duration.HumanDuration(now.Sub(ta.CreationTimestamp.Time)), duration.HumanDuration(ta.Spec.ExpiresAt.Sub(now)), what)
	}
	return tw.Flush()
}

func newApproveCommand(o *options) *cobra.Command {
	return newDecideCommand(o, sessionsv1alpha1.DecisionApproved, &cobra.Command{
		Use:     "approve NAME",
		Short:   "Let a waiting tool call run, or a send or run tree at its budget go on with more (needs the verb approve on toolapprovals)",
		Example: `  kubectl sessions approve tap-3f2a9c0d1e4b5a6c7d8e --reason "ticket OPS-12"`,
	}, "why (recorded in the transcript)")
}

func newDenyCommand(o *options) *cobra.Command {
	cmd := newDecideCommand(o, sessionsv1alpha1.DecisionDenied, &cobra.Command{
		Use:     "deny NAME --reason TEXT",
		Short:   "Refuse a waiting tool call (the agent is told the reason) or more budget (the work fails) (needs the verb approve on toolapprovals)",
		Example: `  kubectl sessions deny tap-3f2a9c0d1e4b5a6c7d8e --reason "not on the production database"`,
	}, "why, told to the agent (required)")
	_ = cmd.MarkFlagRequired("reason")
	return cmd
}

// newDecideCommand completes approve or deny: one approval by name, a --reason.
func newDecideCommand(o *options, d sessionsv1alpha1.ApprovalDecision, cmd *cobra.Command, reasonHelp string) *cobra.Command {
	var reason string
	cmd.Args = cobra.ExactArgs(1)
	cmd.RunE = func(cmd *cobra.Command, args []string) error { return o.decide(cmd, args[0], d, reason) }
	cmd.Flags().StringVar(&reason, "reason", "", reasonHelp)
	return cmd
}

func (o *options) decide(cmd *cobra.Command, name string, d sessionsv1alpha1.ApprovalDecision, reason string) error {
	cl, ns, err := o.clientIn()
	if err != nil {
		return err
	}
	if err := sessiontools.Decide(cmd.Context(), cl, ns, name, d, reason); err != nil {
		return fmt.Errorf("toolapproval/%s: %w", name, err)
	}
	fmt.Fprintf(o.streams.Out, "toolapproval/%s %s\n", name, map[sessionsv1alpha1.ApprovalDecision]string{sessionsv1alpha1.DecisionApproved: "approved", sessionsv1alpha1.DecisionDenied: "denied"}[d])
	return nil
}
