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
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/redact"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// A session's stateVersion is read from its transcript, not kept anywhere else: it is the
// seq of the latest record that changes the session's state for an orchestrating agent (a
// message from a person, a child's outcome, a compaction), 0 while there is none. It only
// grows, and changesSince answers from the same records, so the two can never disagree.

// Change kinds.
const (
	ChangeMessage      = "message"
	ChangeChildOutcome = "child_outcome"
	ChangeCompaction   = "compaction"
)

// compactionRole is the role of the record the memory compaction step writes.
const compactionRole = "compaction"

// MaxChanges bounds the changes one session_status returns: the newest.
const MaxChanges = 50

// changePreviewLen bounds a change's text.
const changePreviewLen = 200

// Change is one state change, at version (its record's seq).
type Change struct {
	Version int64     `json:"version"`
	Kind    string    `json:"kind"`
	At      time.Time `json:"at"`
	Text    string    `json:"text,omitempty"`
	From    string    `json:"from,omitempty"`
}

// changeKind is the kind of change r is, or "" when it is none: people's messages come with
// no provenance or an external one; a child's outcome is the sub-agent announce input.
func changeKind(m *transcript.Message) string {
	switch {
	case m.Role == compactionRole:
		return ChangeCompaction
	case m.Role != transcript.RoleUser:
		return ""
	case m.Provenance == nil || m.Provenance.Kind == transcript.ProvenanceExternal:
		return ChangeMessage
	case m.Provenance.Kind == transcript.ProvenanceSubagentAnnounce:
		return ChangeChildOutcome
	}
	return ""
}

// changeOf is r as a Change, its text cut and masked.
func changeOf(r *transcript.Record, kind string) Change {
	c := Change{Version: r.Seq, Kind: kind, At: r.TS}
	if p := r.Message.Provenance; p != nil {
		c.From = p.SourceSessionKey
	}
	for _, b := range r.Message.Content {
		if b.Type == transcript.BlockText && b.Text != "" {
			c.Text, _ = redact.Redact(textutil.Truncate(b.Text, changePreviewLen))
			break
		}
	}
	return c
}

// stateOf walks a transcript newest first (read pages it) and returns its stateVersion and,
// when since >= 0, the changes after since, oldest first, at most MaxChanges (more says
// some older ones were left out). It reads back only as far as it must: to the newest
// change for the version, and to since for the changes.
func stateOf(ctx context.Context, read func(context.Context, transcript.ReadOptions) (transcript.Page, error), since int64) (version int64, changes []Change, more bool, err error) {
	before := int64(0)
	for {
		page, err := read(ctx, transcript.ReadOptions{Limit: transcript.MaxLimit, BeforeSeq: before, IncludeTools: true})
		if err != nil {
			return 0, nil, false, err
		}
		for i := len(page.Messages) - 1; i >= 0; i-- {
			r := &page.Messages[i]
			kind := changeKind(&r.Message)
			if kind == "" {
				continue
			}
			if version == 0 {
				version = r.Seq
			}
			if since < 0 || r.Seq <= since {
				return version, reverse(changes), more, nil
			}
			if len(changes) == MaxChanges {
				return version, reverse(changes), true, nil
			}
			changes = append(changes, changeOf(r, kind))
		}
		if !page.HasMore || len(page.Messages) == 0 {
			return version, reverse(changes), more, nil
		}
		before = page.Messages[0].Seq
	}
}

func reverse(cs []Change) []Change {
	for i, j := 0, len(cs)-1; i < j; i, j = i+1, j-1 {
		cs[i], cs[j] = cs[j], cs[i]
	}
	return cs
}
