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
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// newMemoryCommand recalls an Agent's memory as the caller: the console's tool action runs
// memory_search or memory_get as a person, so only transcripts the caller may read answer.
func newMemoryCommand(o *options) *cobra.Command {
	var limit, neighbours int
	var output string
	cmd := &cobra.Command{
		Use:   "memory AGENT QUERY | memory get SESSION_ID SEQ[/PART]",
		Short: "Recall an Agent's memory by meaning and words, within the transcripts you may read",
		Example: `  # what agent ops remembers about deploys
  kubectl sessions memory ops "when does the deploy secret change?"

  # a hit with a chunk either side
  kubectl sessions memory get 0b6c... 12/0`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ns, err := o.namespace()
			if err != nil {
				return err
			}
			return o.memoryTool(cmd, ns, sessiontools.MemorySearchTool,
				map[string]any{"agent": args[0], "query": args[1], "limit": limit}, output)
		},
	}
	get := &cobra.Command{
		Use:  "get SESSION_ID SEQ[/PART]",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ns, err := o.namespace()
			if err != nil {
				return err
			}
			seq, part, err := parseSeqPart(args[1])
			if err != nil {
				return err
			}
			return o.memoryTool(cmd, ns, sessiontools.MemoryGetTool,
				map[string]any{"sessionId": args[0], "seq": seq, "part": part, "neighbours": neighbours}, output)
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 5, "how many hits (1..20)")
	cmd.PersistentFlags().StringVarP(&output, "output", "o", "", "json (default: a table)")
	get.Flags().IntVar(&neighbours, "neighbours", 1, "chunks either side (0..5)")
	cmd.AddCommand(get)
	return cmd
}

// parseSeqPart reads SEQ or SEQ/PART.
func parseSeqPart(s string) (int64, int, error) {
	seqText, partText, hasPart := strings.Cut(s, "/")
	seq, err := strconv.ParseInt(seqText, 10, 64)
	if err != nil || seq < 1 {
		return 0, 0, fmt.Errorf("invalid SEQ %q", s)
	}
	part := 0
	if hasPart {
		if part, err = strconv.Atoi(partText); err != nil || part < 0 {
			return 0, 0, fmt.Errorf("invalid PART in %q", s)
		}
	}
	return seq, part, nil
}

// memoryTool runs a memory tool as the caller and prints its result.
func (o *options) memoryTool(cmd *cobra.Command, ns, tool string, args map[string]any, output string) error {
	resp, err := o.listenerPost(cmd.Context(), ns, "/console/tools/"+url.PathEscape(tool), args)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return err
	}
	var refusal sessiontools.StatusResult
	if json.Unmarshal(raw, &refusal) == nil && refusal.Status != "" && refusal.Status != sessiontools.StatusOK {
		return fmt.Errorf("%s: %s", refusal.Status, refusal.Error)
	}
	if output == "json" {
		_, err := cmd.OutOrStdout().Write(raw)
		return err
	}
	if output != "" {
		return fmt.Errorf("unknown output %q: want json", output)
	}
	var hits []transcript.MemoryHit
	if tool == sessiontools.MemorySearchTool {
		var res sessiontools.MemoryResult
		if err := json.Unmarshal(raw, &res); err != nil {
			return fmt.Errorf("%s: %w", tool, err)
		}
		hits = res.Hits
		if res.Vectors != "" {
			fmt.Fprintln(o.streams.ErrOut, "by words only: "+res.Vectors)
		}
	} else {
		var res transcript.MemoryChunks
		if err := json.Unmarshal(raw, &res); err != nil {
			return fmt.Errorf("%s: %w", tool, err)
		}
		hits = res.Chunks
	}
	return printMemory(o.streams.Out, hits)
}

// printMemory writes hits as a table: session, seq/part, kind, score, text.
func printMemory(w io.Writer, hits []transcript.MemoryHit) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tSESSION ID\tSEQ\tKIND\tSCORE\tTEXT")
	for _, h := range hits {
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%s\t%.4f\t%s\n", h.SessionKey, h.SessionID, h.Seq, h.Part, h.Kind, h.Score, oneLine(h.Text))
	}
	return tw.Flush()
}

func oneLine(s string) string { return strings.NewReplacer("\n", " ", "\t", " ").Replace(s) }
