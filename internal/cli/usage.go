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
	"io"
	"sort"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/usage"
)

func newUsageCommand(o *options) *cobra.Command {
	var by, agent string
	var since time.Duration
	cmd := &cobra.Command{
		Use:   "usage",
		Short: "Tokens and cost by agent, session or sub-agent run tree, from the objects' status.usage",
		Example: `  # what each agent of the namespace used, priced with its Agent's spec.model.pricing
  kubectl sessions usage

  # per session of one agent, updated in the last day
  kubectl sessions usage --by session --agent research --since 24h

  # per sub-agent run: each run's row holds the runs its child spawned too, and BUDGET
  # its spend against its budget (spec.budget, else the SessionPolicy's perRun)
  kubectl sessions usage --by run`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cl, ns, err := o.clientIn()
			if err != nil {
				return err
			}
			pol, err := namespacePolicy(cmd.Context(), cl, ns)
			if err != nil {
				return err
			}
			var rows []usageRow
			switch by {
			case "agent", "session":
				var list sessionsv1alpha1.AgentSessionList
				if err := cl.List(cmd.Context(), &list, client.InNamespace(ns)); err != nil {
					return err
				}
				rows = sessionUsageRows(list.Items, by == "agent", agent, cutoff(since))
			case "run":
				var list sessionsv1alpha1.SubagentRunList
				if err := cl.List(cmd.Context(), &list, client.InNamespace(ns)); err != nil {
					return err
				}
				rows = runUsageRows(list.Items, agent, cutoff(since), perRunBudget(pol))
			default:
				return fmt.Errorf("--by %q: want agent, session or run", by)
			}
			printNamespaceBudget(o.streams.Out, pol, time.Now())
			printUsage(o.streams.Out, by, rows)
			return nil
		},
	}
	cmd.Flags().StringVar(&by, "by", "agent", "rows by agent, session or run")
	cmd.Flags().StringVar(&agent, "agent", "", "only this agent's sessions or runs")
	cmd.Flags().DurationVar(&since, "since", 0, "only sessions updated, or runs finished, this recently (e.g. 24h)")
	return cmd
}

func cutoff(since time.Duration) time.Time {
	if since <= 0 {
		return time.Time{}
	}
	return time.Now().Add(-since)
}

// usageRow is one line of the table: its name and what it adds up.
type usageRow struct {
	name, agent string
	usage       *sessionsv1alpha1.Usage
	// budget bounds the row (a run tree's); nil: none.
	budget *sessionsv1alpha1.Budget
}

// sessionUsageRows are the sessions' cumulative usage, one row each or added up per agent.
func sessionUsageRows(sessions []sessionsv1alpha1.AgentSession, perAgent bool, agent string, after time.Time) []usageRow {
	byName := map[string]*usageRow{}
	for i := range sessions {
		s := &sessions[i]
		if agent != "" && s.Spec.AgentID != agent || s.Status.Usage == nil {
			continue
		}
		if !after.IsZero() && (s.Status.UpdatedAt == nil || s.Status.UpdatedAt.Time.Before(after)) {
			continue
		}
		name := s.Spec.Key
		if perAgent {
			name = s.Spec.AgentID
		}
		r, ok := byName[name]
		if !ok {
			r = &usageRow{name: name, agent: s.Spec.AgentID}
			byName[name] = r
		}
		r.usage = usage.Merge(r.usage, s.Status.Usage)
	}
	return sortedRows(byName)
}

// runUsageRows are the runs' usage, each with its subtree rolled up, and each run tree's
// budget: its spec.budget over the policy's perRun (nil: none).
func runUsageRows(runs []sessionsv1alpha1.SubagentRun, agent string, after time.Time, perRun *sessionsv1alpha1.Budget) []usageRow {
	byName := map[string]*usageRow{}
	for i := range runs {
		r := &runs[i]
		if agent != "" && r.Spec.AgentID != agent || r.Status.Usage == nil {
			continue
		}
		if !after.IsZero() && (r.Status.CompletedAt == nil || r.Status.CompletedAt.Time.Before(after)) {
			continue
		}
		b := usage.EffectiveBudget(r.Spec.Budget, perRun)
		byName[r.Name] = &usageRow{name: r.Name, agent: r.Spec.AgentID, usage: r.Status.Usage, budget: &b}
	}
	return sortedRows(byName)
}

func sortedRows(m map[string]*usageRow) []usageRow {
	rows := make([]usageRow, 0, len(m))
	for _, r := range m {
		rows = append(rows, *r)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].name < rows[j].name })
	return rows
}

func printUsage(out io.Writer, by string, rows []usageRow) {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	head := map[string]string{"agent": "AGENT", "session": "SESSION\tAGENT", "run": "RUN\tAGENT"}[by]
	fmt.Fprintf(tw, "%s\tTURNS\tINPUT\tOUTPUT\tCACHED\tCOST\tBUDGET\n", head)
	for _, r := range rows {
		name := r.name
		if by != "agent" {
			name += "\t" + r.agent
		}
		u := r.usage
		cost := "-"
		if u.Cost != "" {
			cost = u.Cost + " " + u.Currency
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", name, u.Turns, strconv.FormatInt(u.InputTokens, 10),
			strconv.FormatInt(u.OutputTokens, 10), strconv.FormatInt(u.CachedInputTokens, 10), cost, budgetText(r.budget, usage.SpentOfUsage(u)))
	}
	_ = tw.Flush()
}
