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
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

func newStatusCommand(o *options) *cobra.Command {
	var since int64
	var output string
	cmd := &cobra.Command{
		Use:   "status KEY",
		Short: "Print a session's status card as session_status does",
		Example: `  # usage, model, runs in flight and the state version
  kubectl sessions status agent:main:main --history-url https://127.0.0.1:8090

  # what changed since state version 12, as JSON
  kubectl sessions status agent:main:main --changes-since 12 -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.status(cmd.Context(), args[0], since, output)
		},
	}
	cmd.Flags().Int64Var(&since, "changes-since", -1, "list the changes after this state version (needs --history-url)")
	cmd.Flags().StringVarP(&output, "output", "o", "", "json or yaml (default: a card)")
	return cmd
}

func (o *options) status(ctx context.Context, key string, since int64, output string) error {
	cl, ns, err := o.clientIn()
	if err != nil {
		return err
	}
	cl = cacheindex.WithIndexes(cl)
	env := &sessiontools.Env{Client: cl, Reader: cl}
	if o.historyURL != "" {
		env.Store = historyTranscripts{o}
	}
	card, err := (&sessiontools.Call{Env: env, Namespace: ns}).Status(ctx, key, since)
	if err != nil {
		return err
	}
	if output != "" {
		return printAs(o.streams.Out, output, card)
	}
	return printCard(o.streams.Out, card, o.historyURL != "")
}

// printCard writes the card for people: one field a line, then the runs and the changes.
func printCard(w io.Writer, c *sessiontools.StatusCard, versioned bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	model := orDash(c.Model)
	if c.ModelOverride != "" {
		model += " (session override)"
	}
	cost := orDash(c.Usage.Cost)
	if c.Usage.Cost != "" && c.Usage.Currency != "" {
		cost += " " + c.Usage.Currency
	}
	version := "- (no --history-url)"
	if versioned {
		version = strconv.FormatInt(c.StateVersion, 10)
	}
	for _, f := range [][2]string{
		{"Session", c.SessionKey}, {"Session ID", orDash(c.SessionID)}, {"Agent", orDash(c.AgentID)},
		{"Label", orDash(c.Label)}, {"Phase", orDash(c.Phase)}, {"Model", model}, {"Thinking", orDash(c.ThinkingLevel)},
		{"Usage", fmt.Sprintf("%d turns, %d in, %d out, %d cached", c.Usage.Turns, c.Usage.InputTokens, c.Usage.OutputTokens, c.Usage.CachedInputTokens)},
		{"Cost", cost}, {"Messages", strconv.FormatInt(c.MessageCount, 10)}, {"Active run", orDash(c.ActiveRunID)},
		{"State version", version},
	} {
		fmt.Fprintf(tw, "%s:\t%s\n", f[0], f[1])
	}
	fmt.Fprintf(tw, "Runs in flight:\t%d\n", len(c.RunsInFlight))
	for _, r := range c.RunsInFlight {
		fmt.Fprintf(tw, "  %s %s\t%s %s%s\n", r.Kind, r.Name, orDash(r.Phase), r.Target, r.ChildSessionKey)
	}
	for _, ch := range c.Changes {
		fmt.Fprintf(tw, "  %d %s\t%s\n", ch.Version, ch.Kind, ch.Text)
	}
	return tw.Flush()
}

// historyTranscripts reads transcripts through the history API, as the kubeconfig user.
type historyTranscripts struct{ o *options }

func (h historyTranscripts) Read(ctx context.Context, ns, sessionID string, opts transcript.ReadOptions) (transcript.Page, error) {
	q := url.Values{"limit": {strconv.Itoa(opts.Limit)}}
	if opts.BeforeSeq > 0 {
		q.Set("cursor", strconv.FormatInt(opts.BeforeSeq, 10))
	}
	if opts.AfterSeq > 0 {
		q.Set("after", strconv.FormatInt(opts.AfterSeq, 10))
	}
	if opts.IncludeTools {
		q.Set("includeTools", "1")
	}
	resp, err := h.o.historyRequest(ctx, ns, sessionID, q)
	if err != nil {
		return transcript.Page{}, err
	}
	defer resp.Body.Close()
	var page transcript.HistoryResponse
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		return transcript.Page{}, fmt.Errorf("history API: %w", err)
	}
	return transcript.Page{Messages: page.Messages, HasMore: page.HasMore, NextCursor: page.NextCursor}, nil
}
