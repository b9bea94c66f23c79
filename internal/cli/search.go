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
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

func newSearchCommand(o *options) *cobra.Command {
	var limit, offset int
	var output string
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Find the messages that hold every word of QUERY in the transcripts you may read",
		Example: `  # the best 20 matches, with the history cursor that opens each
  kubectl sessions search "llama facts"

  # the next page, as JSON
  kubectl sessions search llamas --offset 20 -o json

  # open a hit: its page of history ends with it
  kubectl sessions history agent:main:main --cursor seq:43`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ns, err := o.namespace()
			if err != nil {
				return err
			}
			q := url.Values{"q": {args[0]}, "limit": {strconv.Itoa(limit)}, "offset": {strconv.Itoa(offset)}}
			resp, err := o.listenerRequest(cmd.Context(), ns, "/search", q)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			var res transcript.SearchResult
			if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
				return fmt.Errorf("search: %w", err)
			}
			return printSearch(o.streams.Out, res, output)
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 20, "how many hits (1..100)")
	cmd.Flags().IntVar(&offset, "offset", 0, "skip this many hits (the next page starts at the offset printed last)")
	cmd.Flags().StringVarP(&output, "output", "o", "", "json (default: a table)")
	return cmd
}

// printSearch writes the hits as a table (session, cursor, role, excerpt) or JSON.
func printSearch(w io.Writer, res transcript.SearchResult, output string) error {
	switch output {
	case "json":
		return printJSON(w, res)
	case "":
	default:
		return fmt.Errorf("unknown output %q: want json", output)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tCURSOR\tROLE\tEXCERPT")
	for _, h := range res.Hits {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", h.SessionKey, h.Cursor, h.Role, h.Excerpt)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if res.NextOffset > 0 {
		fmt.Fprintf(w, "more: --offset %d\n", res.NextOffset)
	}
	return nil
}
