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
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/sessionrows"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

func newListCommand(o *options) *cobra.Command {
	var kinds []string
	var limit, active, messages int64
	var archived bool
	var output string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List sessions as sessions_list does",
		Long: `List sessions as sessions_list does, most recently updated first.

With --archived it lists the archived sessions instead, as sessions_list's archived
argument does, and its STATE column says what is left of each: "archived" keeps its
AgentSession; "retired" is one whose object the SessionPolicy's retention deleted, listed
from the transcript store's record until the transcript's own retention (restore brings
it back). Retired sessions are read through the transcript store: --archived lists them
only with --history-url, and says so when it cannot.`,
		Example: `  # the ten most recently active group and main sessions
  kubectl sessions list --kinds group,main --limit 10

  # rows as JSON, with each session's last 3 messages
  kubectl sessions list -o json --messages 3 --history-url https://127.0.0.1:8090

  # archived sessions, retired ones too (their object gone)
  kubectl sessions list --archived --history-url https://127.0.0.1:8090`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := sessionrows.NewListParams(kinds, limit, active, messages)
			if err != nil {
				return err
			}
			p.Archived = archived
			return o.list(cmd.Context(), p, output)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&kinds, "kinds", nil, "only these kinds: main, group, cron, hook, node, other")
	f.Int64Var(&limit, "limit", sessionrows.DefaultListLimit, "max rows (at most 200)")
	f.Int64Var(&active, "active-minutes", 0, "only sessions updated within N minutes")
	f.Int64Var(&messages, "messages", 0, "include the last N messages of each session, 0 to 20 (needs --history-url)")
	f.BoolVar(&archived, "archived", false, "list archived sessions instead of active ones, retired ones too (those need --history-url)")
	f.StringVarP(&output, "output", "o", "", "json or yaml (default: a table)")
	return cmd
}

// noRetired is said when --archived cannot ask the transcript store for retired sessions.
const noRetired = "retired sessions (their object deleted by the SessionPolicy's retention) are not listed: " +
	"the transcript store keeps their records; pass --history-url or set AGENT_SESSIONS_HISTORY_URL"

func (o *options) list(ctx context.Context, p sessionrows.ListParams, output string) error {
	var rows []sessionrows.SessionRow
	var err error
	if p.Archived && o.historyURL != "" {
		rows, err = o.storeRows(ctx, p)
	} else {
		if p.Archived {
			fmt.Fprintln(o.streams.ErrOut, noRetired)
		}
		rows, err = o.apiRows(ctx, p)
	}
	if err != nil {
		return err
	}
	return printRows(o.streams.Out, rows, output, p.Archived)
}

// apiRows are the rows of the sessions the kubeconfig user lists, with their messages
// from the history API when asked.
func (o *options) apiRows(ctx context.Context, p sessionrows.ListParams) ([]sessionrows.SessionRow, error) {
	cl, ns, err := o.clientIn()
	if err != nil {
		return nil, err
	}
	var all sessionsv1alpha1.AgentSessionList
	if err := cl.List(ctx, &all, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	rows := sessionrows.ListRows(sessionrows.Pointers(all.Items), p, time.Now(), nil)
	if p.MessageLimit > 0 {
		for i := range rows {
			if rows[i].Messages, err = o.fetchHistory(ctx, ns, rows[i].Key, p.MessageLimit); err != nil {
				return nil, err
			}
		}
	}
	return rows, nil
}

// storeRows are sessions_list's rows as the transcript-store's console action answers them
// for the caller: the archived sessions' objects and the retired sessions' records, in one
// order, the retired ones marked, under the same access and visibility rules as the tool.
func (o *options) storeRows(ctx context.Context, p sessionrows.ListParams) ([]sessionrows.SessionRow, error) {
	ns, err := o.namespace()
	if err != nil {
		return nil, err
	}
	args := map[string]any{"limit": p.Limit, "archived": p.Archived}
	if len(p.Kinds) > 0 {
		args["kinds"] = p.Kinds
	}
	if p.ActiveMinutes > 0 {
		args["activeMinutes"] = p.ActiveMinutes
	}
	if p.MessageLimit > 0 {
		args["messageLimit"] = p.MessageLimit
	}
	resp, err := o.listenerPost(ctx, ns, "/console/tools/sessions_list", args)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var page struct {
		Sessions []sessionrows.SessionRow `json:"sessions"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&page); err != nil {
		return nil, fmt.Errorf("sessions_list through the transcript-store: %w", err)
	}
	return page.Sessions, nil
}

// printRows writes rows as JSON, YAML or a table; an archived list's table says in STATE
// whether each session keeps its object (archived) or only the store's record (retired).
func printRows(out io.Writer, rows []sessionrows.SessionRow, output string, archived bool) error {
	if output != "" {
		return printAs(out, output, rows)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	state := func(sessionrows.SessionRow) string { return "" }
	header := "KEY\tKIND\tCHANNEL\tUPDATED\tTOKENS\tSEND"
	if archived {
		header += "\tSTATE"
		state = func(r sessionrows.SessionRow) string {
			if r.Retired {
				return "\tretired"
			}
			return "\tarchived"
		}
	}
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		updated := time.UnixMilli(r.UpdatedAt).Format(time.RFC3339)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s%s\n", r.Key, r.Kind, r.Channel, updated, r.TotalTokens, orDash(r.SendPolicy), state(r))
		for _, m := range r.Messages {
			var text []string
			for _, b := range m.Message.Content {
				text = append(text, b.Text)
			}
			fmt.Fprintf(tw, "  %d %s:\t%s\t\t\t\t\n", m.Seq, m.Message.Role, strings.Join(text, " "))
		}
	}
	return tw.Flush()
}

// fetchHistory reads a session's last messages from the history API, without tool results.
func (o *options) fetchHistory(ctx context.Context, ns, key string, limit int) ([]transcript.Record, error) {
	resp, err := o.historyRequest(ctx, ns, key, url.Values{"limit": {strconv.Itoa(limit)}})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var page transcript.HistoryResponse
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		return nil, fmt.Errorf("history API: %w", err)
	}
	return page.Messages, nil
}

// historyRequest GETs a session's history with the bearer token; a non-200 is an error.
func (o *options) historyRequest(ctx context.Context, ns, key string, q url.Values) (*http.Response, error) {
	return o.listenerRequest(ctx, ns, "/sessions/"+url.PathEscape(key)+"/history", q)
}

// listenerRequest GETs path on the transcript-store's listener (history API, /events) with
// the caller's bearer token, and turns a non-200 answer into an error.
func (o *options) listenerRequest(ctx context.Context, ns, path string, q url.Values) (*http.Response, error) {
	return o.listenerDo(ctx, http.MethodGet, ns, path, q, nil)
}

// listenerPost POSTs body as JSON to path on the listener (a console action: a session
// tool as the caller), as listenerRequest GETs.
func (o *options) listenerPost(ctx context.Context, ns, path string, body any) (*http.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	return o.listenerDo(ctx, http.MethodPost, ns, path, url.Values{}, b)
}

func (o *options) listenerDo(ctx context.Context, method, ns, path string, q url.Values, body []byte) (*http.Response, error) {
	if o.historyURL == "" {
		return nil, fmt.Errorf("no history API address: pass --history-url or set AGENT_SESSIONS_HISTORY_URL (make run-local prints it)")
	}
	token, err := o.bearerToken()
	if err != nil {
		return nil, err
	}
	q.Set("namespace", ns)
	u := strings.TrimSuffix(o.historyURL, "/") + path + "?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(token))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc, err := o.historyClient()
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("history API: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return nil, apiError(resp)
	}
	return resp, nil
}

// printJSON writes v as indented JSON, as -o json prints.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// printAs writes v as output says: json or yaml.
func printAs(w io.Writer, output string, v any) error {
	switch output {
	case "json":
		return printJSON(w, v)
	case "yaml":
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	return fmt.Errorf("unknown output %q: want json or yaml", output)
}
