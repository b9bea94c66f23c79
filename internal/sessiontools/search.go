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

package sessiontools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/caller"
	"github.com/agent-sessions/agent-session-operator/internal/sessionrows"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// sessions_search bounds (the index clamps them too).
const (
	DefaultSearchLimit = 20
	MaxSearchLimit     = 100
)

type searchArgs struct {
	Query  string `json:"query"`
	Limit  Number `json:"limit"`
	Offset Number `json:"offset"`
}

func searchTool() Tool {
	return Tool{Name: "sessions_search",
		Description: "Search the transcripts of the sessions visible to this session for messages holding every word of a query, best matches first. " +
			"Each hit gives sessionKey, sessionId, the message's seq and id, and an excerpt; open it with sessions_history {sessionKey, cursor}.",
		Schema: Schema(map[string]any{
			"query":  map[string]any{"type": "string", "description": "the words to find (all of them, any case)"},
			"limit":  map[string]any{"type": "number", "description": "max hits (default 20, at most 100)"},
			"offset": map[string]any{"type": "number", "description": "skip this many hits (the nextOffset of the previous page)"},
		}, "query"),
		Run: func(ctx context.Context, c *Call, args json.RawMessage) (any, error) {
			var a searchArgs
			if err := DecodeArgs(args, &a); err != nil {
				return nil, err
			}
			if a.Query == "" {
				return nil, errors.New("query is required")
			}
			return c.search(ctx, transcript.SearchQuery{Namespace: c.Namespace, Text: a.Query,
				Limit: int(Clamp(a.Limit.Or(DefaultSearchLimit), 1, MaxSearchLimit)), Offset: int(Clamp(a.Offset.Or(0), 0, 1<<20))})
		}}
}

// SearchResult is sessions_search's result: the hits of one page, and nextOffset while
// there are more, all of transcripts the caller may read.
type SearchResult struct {
	Query      string                 `json:"query"`
	Hits       []transcript.SearchHit `json:"hits"`
	Count      int                    `json:"count"`
	NextOffset int                    `json:"nextOffset,omitempty"`
}

// MaxSearchScan bounds the sessions asked one by one (most recently updated first) for a
// caller without the namespace-wide transcript grant: such a search costs at most this many
// access reviews, under the per-user API burst, and searches the sessions it may read
// among them.
const MaxSearchScan = 32

// ReadableSessionIDs are the sessionIds of the sessions walk yields (most recently updated
// first) that have a transcript in the indexes and that may allows, asking about
// MaxSearchScan of them at most. An archived session is passed over without asking: archive
// removed its transcript's entries from the full-text and memory indexes, so it cannot take
// one of the scan's places from a live session further down. An error of may ends the walk
// and is returned.
func ReadableSessionIDs(walk func(yield func(*sessionsv1alpha1.AgentSession) bool), may func(name string) (bool, error)) ([]string, error) {
	ids := []string{}
	asked := 0
	var err error
	walk(func(s *sessionsv1alpha1.AgentSession) bool {
		if !indexed(s) {
			return true
		}
		asked++
		var ok bool
		if ok, err = may(s.Name); err != nil {
			return false
		}
		if ok {
			ids = append(ids, s.Status.SessionID)
		}
		return asked < MaxSearchScan
	})
	return ids, err
}

// search asks the index for the sessions the caller sees and may read (readableScope),
// before it pages. The hits, nextOffset and count are all of readable transcripts.
func (c *Call) search(ctx context.Context, q transcript.SearchQuery) (any, error) {
	searcher, ok := c.Store.(transcript.Searcher)
	if !ok {
		return nil, errors.New("sessions_search is not available: the transcript store keeps no search index")
	}
	ids, refusal, err := c.readableScope(ctx)
	if err != nil {
		return nil, err
	}
	if refusal != nil {
		return refusal, nil
	}
	q.SessionIDs = ids
	res, err := searcher.Search(ctx, q)
	if err != nil {
		return nil, err
	}
	out := SearchResult{Query: q.Text, Hits: res.Hits, NextOffset: res.NextOffset, Count: len(res.Hits)}
	if out.Hits == nil {
		out.Hits = []transcript.SearchHit{}
	}
	return out, nil
}

// readableScope is the sessionIds whose transcripts the caller may search or recall (nil:
// the whole namespace): an agent's session only the sessions its visibility shows it (a
// sandboxed one, its own tree), and a caller without the namespace-wide transcript grant
// only the sessions it may read one by one (ReadableSessionIDs), or a refusal as /events
// refuses it when it may read none.
func (c *Call) readableScope(ctx context.Context) ([]string, *StatusResult, error) {
	wide := c.may(ctx, caller.ReadTranscript, "") == nil
	if c.Session == nil && wide {
		return nil, nil, nil
	}
	all, err := c.sessions(ctx)
	if err != nil {
		return nil, nil, err
	}
	seen, total, err := c.visibleSessions(ctx, all)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case !wide:
		slices.SortFunc(seen, sessionrows.NewerFirst)
		ids, err := ReadableSessionIDs(slices.Values(seen), func(name string) (bool, error) {
			err := c.may(ctx, caller.ReadTranscript, name)
			if err != nil && !apierrors.IsForbidden(err) {
				return false, err
			}
			return err == nil, nil
		})
		if err != nil {
			return nil, nil, err
		}
		if len(ids) == 0 {
			return nil, &StatusResult{Status: StatusForbidden, Error: fmt.Sprintf(
				"the caller may read the transcript of no session in namespace %q (of its %d most recently updated it sees)", c.Namespace, MaxSearchScan)}, nil
		}
		return ids, nil, nil
	case len(seen) < total:
		ids := make([]string, 0, len(seen))
		for _, s := range seen {
			if indexed(s) {
				ids = append(ids, s.Status.SessionID)
			}
		}
		return ids, nil, nil
	}
	return nil, nil, nil
}

// indexed says whether s's transcript is in the full-text and memory indexes: it has one,
// and it is not archived (archive removes its entries; a retired session, archived before
// its object went, has none either). Sessions still count as seen or not for the scope: an
// archived one the caller does not see narrows it, as the index may not have dropped it yet.
func indexed(s *sessionsv1alpha1.AgentSession) bool {
	return s.Status.SessionID != "" && s.Status.Phase != sessionsv1alpha1.SessionArchived
}

// visibleSessions are the sessions with a transcript that the calling session sees (all of
// them for a person, whose reader already runs with its own rights), and how many have one.
func (c *Call) visibleSessions(ctx context.Context, all []*sessionsv1alpha1.AgentSession) ([]*sessionsv1alpha1.AgentSession, int, error) {
	var pol *sessionsv1alpha1.SessionPolicy
	if c.Session != nil {
		var err error
		if pol, err = c.sessionPolicy(ctx); err != nil {
			return nil, 0, err
		}
	}
	out := make([]*sessionsv1alpha1.AgentSession, 0, len(all))
	total := 0
	for _, s := range all {
		if s.Status.SessionID == "" {
			continue
		}
		total++
		if pol != nil {
			if ok, _ := c.sees(ctx, pol, s); !ok {
				continue
			}
		}
		out = append(out, s)
	}
	return out, total, nil
}
