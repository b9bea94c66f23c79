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
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
)

func newDeliveriesCommand(o *options) *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:   "deliveries",
		Short: "List recent announce deliveries with their status and error",
		Long: `List the announces of the namespace's SessionSends and SubagentRuns, newest first:
where each went (channel:chat#thread), its status (delivered, delivering, failed,
noSink, skipped), the parts a chat sink took, and the platform's error or the reason.`,
		Example: `  # the last 20 deliveries
  kubectl sessions deliveries

  # the last 100
  kubectl sessions deliveries --limit 100`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cl, ns, err := o.clientIn()
			if err != nil {
				return err
			}
			rows, err := listDeliveries(cmd.Context(), cl, ns)
			if err != nil {
				return err
			}
			printDeliveries(o.streams.Out, rows, limit, time.Now())
			return nil
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 20, "max rows")
	return cmd
}

// deliveryRow is one announce of a send or run.
type deliveryRow struct {
	object   string
	created  time.Time
	announce *sessionsv1alpha1.Announce
}

func listDeliveries(ctx context.Context, cl client.Client, ns string) ([]deliveryRow, error) {
	var sends sessionsv1alpha1.SessionSendList
	if err := cl.List(ctx, &sends, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var runs sessionsv1alpha1.SubagentRunList
	if err := cl.List(ctx, &runs, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var rows []deliveryRow
	for i := range sends.Items {
		s := &sends.Items[i]
		if s.Status.Announce != nil {
			rows = append(rows, deliveryRow{object: "sessionsend/" + s.Name, created: s.CreationTimestamp.Time, announce: s.Status.Announce})
		}
	}
	for i := range runs.Items {
		r := &runs.Items[i]
		if r.Status.Announce != nil {
			rows = append(rows, deliveryRow{object: "subagentrun/" + r.Name, created: r.CreationTimestamp.Time, announce: r.Status.Announce})
		}
	}
	return rows, nil
}

// printDeliveries prints the newest limit rows.
func printDeliveries(out io.Writer, rows []deliveryRow, limit int, now time.Time) {
	sort.SliceStable(rows, func(i, j int) bool {
		if !rows[i].created.Equal(rows[j].created) {
			return rows[i].created.After(rows[j].created)
		}
		return rows[i].object < rows[j].object
	})
	if limit > 0 && len(rows) > limit {
		rows = rows[:limit]
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "OBJECT\tSTATUS\tTARGET\tPARTS\tTHREAD\tAGE\tERROR")
	for _, r := range rows {
		a := r.announce
		parts, thread, why := "-", "-", a.Reason
		if a.Parts > 0 {
			parts = fmt.Sprintf("%d/%d", len(a.DeliveredParts), a.Parts)
		}
		if a.Thread != nil {
			thread = a.Thread.ID
		}
		if a.Error != "" {
			why = a.Error
		}
		if a.Status == sessionsv1alpha1.AnnounceDelivered || why == "" {
			why = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.object, a.Status, orDash(a.Target), parts, thread,
			duration.HumanDuration(now.Sub(r.created)), textutil.Truncate(strings.ReplaceAll(why, "\n", " "), 80))
	}
	_ = w.Flush()
}

// printRoute says where a session's announces go.
func printRoute(out io.Writer, r policy.Route) {
	switch {
	case r.Sink == nil:
		fmt.Fprintf(out, "delivery: no sink for channel %q in SessionPolicy default spec.delivery (announces end noSink)\n", r.Channel)
		return
	case r.Problem != "":
		fmt.Fprintf(out, "delivery: %s sink, but %s\n", r.Sink.Kind, r.Problem)
		return
	}
	fmt.Fprintf(out, "delivery: %s sink for channel %s", r.Sink.Kind, r.Channel)
	switch {
	case r.Sink.Kind.IsChat():
		fmt.Fprintf(out, ", chat %s", r.To)
	case r.Sink.Kind == sessionsv1alpha1.DeliveryWebhook:
		fmt.Fprintf(out, ", POST %s", r.Sink.URL)
		if r.Sink.SigningSecretRef != nil {
			fmt.Fprint(out, " (signed)")
		}
	}
	if r.ThreadID != "" {
		fmt.Fprintf(out, ", thread %s", r.ThreadID)
	}
	fmt.Fprintln(out)
}
