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
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agent-sessions/agent-session-operator/internal/events"
	"github.com/agent-sessions/agent-session-operator/internal/sse"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

func newEventsCommand(o *options) *cobra.Command {
	var sessions []string
	var kinds, output string
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Follow the namespace's live event stream: session changes and messages",
		Long: `Follow the namespace's live event stream: session changes and messages, of every
session you may read or of the sessions named with --session (a key or a sessionId,
repeated to follow several). The stream runs until you stop it (Ctrl-C closes it).`,
		Example: `  # every session you may read in the namespace, as it changes
  kubectl sessions events

  # the messages of two sessions, one named by its sessionId
  kubectl sessions events --session agent:main:main --session 0b6f9a3e-1111-4222-8333-444455556666 \
    --kinds session.message

  # one session, with its sends and runs, as JSON lines
  kubectl sessions events --session agent:main:main \
    --kinds sessions.changed,session.message,sends.changed,runs.changed -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "" && output != "json" {
				return fmt.Errorf("unknown output %q: want json", output)
			}
			return o.events(cmd, sessions, kinds, output == "json")
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&sessions, "session", nil, "only this session (key or sessionId); repeat to follow several")
	f.StringVar(&kinds, "kinds", "", "comma-separated kinds (default sessions.changed,session.message,session.delta; also sends.changed, runs.changed, approvals.changed)")
	f.StringVarP(&output, "output", "o", "", "json: one JSON object per event (default: one line of text)")
	return cmd
}

func (o *options) events(cmd *cobra.Command, sessions []string, kinds string, asJSON bool) error {
	ns, err := o.namespace()
	if err != nil {
		return err
	}
	q := url.Values{"session": sessions}
	if kinds != "" {
		q.Set("kinds", kinds)
	}
	resp, err := o.listenerRequest(cmd.Context(), ns, "/events", q)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	r := sse.NewReader(resp.Body)
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) || cmd.Context().Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("event stream: %w", err)
		}
		if ev.Event == "end" {
			return fmt.Errorf("event stream ended by the server: %s", ev.Data)
		}
		if ev.Event == events.KindStream {
			continue // the stream's id: the plugin follows what its flags name and changes nothing
		}
		if err := printEvent(o.streams.Out, ev, asJSON); err != nil {
			return err
		}
	}
}

// eventLine is what the text form shows of an event's payload.
type eventLine struct {
	Phase      string            `json:"phase"`
	SessionKey string            `json:"sessionKey"`
	Seq        int64             `json:"seq"`
	Record     json.RawMessage   `json:"record"`
	Stats      *transcript.Stats `json:"stats"`
}

// printEvent writes one event: as {"event":..., "data":...} or one line of text.
func printEvent(w io.Writer, ev sse.Event, asJSON bool) error {
	if asJSON {
		b, err := json.Marshal(struct {
			Event string          `json:"event"`
			Data  json.RawMessage `json:"data"`
		}{ev.Event, ev.Data})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	var l eventLine
	if err := json.Unmarshal(ev.Data, &l); err != nil {
		fmt.Fprintf(w, "%s\t%s\n", ev.Event, ev.Data)
		return nil
	}
	switch {
	case ev.Event == "session.message" && l.Record != nil:
		var rec transcript.Record
		if json.Unmarshal(l.Record, &rec) == nil {
			var b strings.Builder
			printRecords(&b, []transcript.Record{rec})
			fmt.Fprintf(w, "%s\t%s\t%s", ev.Event, l.SessionKey, b.String())
			return nil
		}
	case l.Stats != nil:
		fmt.Fprintf(w, "%s\t%s\t%s\tmessages=%d tokens=%d\t%s\n", ev.Event, l.SessionKey, l.Phase,
			l.Stats.MessageCount, l.Stats.TotalTokens, l.Stats.LastPreview)
		return nil
	}
	fmt.Fprintf(w, "%s\t%s\t%s\n", ev.Event, orDash(l.SessionKey), orDash(l.Phase))
	return nil
}
