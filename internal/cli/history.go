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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agent-sessions/agent-session-operator/internal/sse"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

func newHistoryCommand(o *options) *cobra.Command {
	var limit int
	var cursor string
	var includeTools, follow bool
	cmd := &cobra.Command{
		Use:   "history KEY",
		Short: "Print a session's transcript, or follow it as it grows",
		Example: `  # the last 20 messages of the main agent's main session
  kubectl sessions history agent:main:main --limit 20 --history-url https://127.0.0.1:8090

  # follow new messages as they are appended, tool results included
  kubectl sessions history agent:main:main --follow --include-tools`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.history(cmd, args[0], limit, cursor, includeTools, follow)
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 50, "how many of the latest messages to print (1..1000)")
	cmd.Flags().BoolVar(&includeTools, "include-tools", false, "include tool results")
	cmd.Flags().StringVar(&cursor, "cursor", "", "print the page before this point: a search hit's cursor (seq:N)")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "stream new messages as they arrive")
	return cmd
}

func (o *options) history(cmd *cobra.Command, key string, limit int, cursor string, includeTools, follow bool) error {
	ns, err := o.namespace()
	if err != nil {
		return err
	}
	q := url.Values{"limit": {strconv.Itoa(limit)}}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	if includeTools {
		q.Set("includeTools", "1")
	}
	if follow {
		q.Set("follow", "1")
	}
	resp, err := o.historyRequest(cmd.Context(), ns, key, q)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out := o.streams.Out
	if cl, err := o.client(); err == nil {
		if line := threadBindingOf(cmd.Context(), cl, ns, key); line != "" {
			fmt.Fprintln(out, line)
		}
	}
	if !follow {
		var page transcript.HistoryResponse
		if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
			return fmt.Errorf("history API: %w", err)
		}
		printRecords(out, page.Messages)
		return nil
	}
	events := sse.NewReader(resp.Body)
	for {
		ev, err := events.Next()
		if errors.Is(err, io.EOF) || cmd.Context().Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("history stream: %w", err)
		}
		switch ev.Event {
		case "history":
			var page transcript.HistoryResponse
			if err := json.Unmarshal(ev.Data, &page); err != nil {
				return fmt.Errorf("history stream: %w", err)
			}
			printRecords(out, page.Messages)
		case "message":
			var rec transcript.Record
			if err := json.Unmarshal(ev.Data, &rec); err != nil {
				return fmt.Errorf("history stream: %w", err)
			}
			printRecords(out, []transcript.Record{rec})
		case "end":
			return fmt.Errorf("history stream ended by the server: %s", ev.Data)
		}
	}
}

// apiError turns the history API's {"error":{"type","message"}} into one line.
func apiError(resp *http.Response) error {
	var body struct {
		Error struct{ Type, Message string } `json:"error"`
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(raw, &body) == nil && body.Error.Type != "" {
		return fmt.Errorf("history API: %s (%s)", body.Error.Message, body.Error.Type)
	}
	return fmt.Errorf("history API: %s: %s", resp.Status, strings.TrimSpace(string(raw)))
}

// printRecords writes one line per message: seq, role, provenance, text and tool calls.
func printRecords(w io.Writer, recs []transcript.Record) {
	for _, r := range recs {
		m := r.Message
		who := m.Role
		if m.Provenance != nil && m.Provenance.SourceSessionKey != "" {
			who += " (from " + m.Provenance.SourceSessionKey + ")"
		}
		if m.Role == transcript.RoleToolResult {
			who += " " + m.ToolName
		}
		if c := m.Compaction; c != nil {
			who += fmt.Sprintf(" of %d-%d", c.FromSeq, c.ToSeq)
		}
		var parts []string
		for _, b := range m.Content {
			switch b.Type {
			case transcript.BlockText:
				parts = append(parts, b.Text)
			case transcript.BlockToolCall:
				parts = append(parts, fmt.Sprintf("[call %s %s]", b.Name, b.Arguments))
			}
		}
		fmt.Fprintf(w, "%d\t%s\t%s\n", r.Seq, who, strings.Join(parts, " "))
	}
}
