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
	"encoding/json"
	"slices"

	"github.com/agent-sessions/agent-session-operator/internal/redact"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// redactRecords is recs with credential-like text masked in every text, thinking and tool
// call argument, and whether anything was. The records are copied where masked: a page may
// share its records with the store's cache.
func redactRecords(recs []transcript.Record) ([]transcript.Record, bool) {
	masked := false
	out := recs
	for i := range recs {
		blocks, changed := redactBlocks(recs[i].Message.Content)
		if !changed {
			continue
		}
		if !masked {
			out = slices.Clone(recs)
			masked = true
		}
		out[i].Message.Content = blocks
	}
	return out, masked
}

func redactBlocks(blocks []transcript.ContentBlock) ([]transcript.ContentBlock, bool) {
	var out []transcript.ContentBlock
	for i, b := range blocks {
		text, t := redact.Redact(b.Text)
		thinking, th := redact.Redact(b.Thinking)
		args, a := redactArguments(b.Arguments)
		if !t && !th && !a {
			continue
		}
		if out == nil {
			out = slices.Clone(blocks)
		}
		out[i].Text, out[i].Thinking, out[i].Arguments = text, thinking, args
	}
	if out == nil {
		return blocks, false
	}
	return out, true
}

// redactArguments masks a tool call's arguments as text; arguments that would no longer be
// JSON once masked are replaced by a JSON string of the masked text.
func redactArguments(raw json.RawMessage) (json.RawMessage, bool) {
	if len(raw) == 0 {
		return raw, false
	}
	s, changed := redact.Redact(string(raw))
	if !changed {
		return raw, false
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s), true
	}
	b, _ := json.Marshal(s)
	return b, true
}
