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

package transcript

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRecordRoundTrip(t *testing.T) {
	ts := time.Date(2026, 5, 6, 7, 8, 9, 123, time.UTC)
	cases := map[string]Record{
		"user text": {Seq: 1, ID: "r1", TS: ts, IdempotencyKey: "k1", Message: textMsg(RoleUser, "hi")},
		"assistant tool call with usage": {Seq: 2, ID: "r2", TS: ts, Message: Message{
			Role: RoleAssistant, Model: "m", Provider: "scripted", StopReason: "toolUse",
			Content: []ContentBlock{{Type: BlockText, Text: "calling"}, {Type: BlockToolCall, ID: "c1", Name: "sessions_send", Arguments: json.RawMessage(`{"sessionKey":"main"}`)}},
			Usage:   &Usage{Input: 10, Output: 5, TotalTokens: 15, Cost: 0.25},
		}},
		"tool result error": {Seq: 3, ID: "r3", TS: ts, Message: Message{Role: RoleToolResult, ToolCallID: "c1", ToolName: "sessions_send", IsError: true, Content: []ContentBlock{{Type: BlockText, Text: "denied"}}}},
		"inter-session provenance": {Seq: 4, ID: "r4", TS: ts, Message: Message{
			Role: RoleUser, Content: []ContentBlock{{Type: BlockText, Text: "from b"}},
			Provenance: &Provenance{Kind: ProvenanceInterSession, SourceSessionKey: "agent:b:main", SourceChannel: "internal", SourceTool: "sessions_send"},
		}},
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			line, err := EncodeRecord(&want)
			if err != nil {
				t.Fatal(err)
			}
			if line[len(line)-1] != '\n' {
				t.Fatalf("encoded line lacks newline: %q", line)
			}
			got, err := DecodeRecord(line)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeRecordRejects(t *testing.T) {
	cases := map[string]string{
		"empty":          ``,
		"not json":       `hello`,
		"torn":           `{"seq":3,"id":"x","message":{"role":"user","cont`,
		"zero seq":       `{"seq":0,"id":"x","message":{"role":"user","content":[]}}`,
		"negative seq":   `{"seq":-4,"id":"x","message":{"role":"user","content":[]}}`,
		"no role":        `{"seq":2,"id":"x","message":{"content":[]}}`,
		"header line":    `{"type":"session","version":1,"sessionId":"s"}`,
		"array":          `[1,2,3]`,
		"seq not number": `{"seq":"7","id":"x","message":{"role":"user"}}`,
	}
	for name, line := range cases {
		t.Run(name, func(t *testing.T) {
			if r, err := DecodeRecord([]byte(line)); err == nil {
				t.Errorf("DecodeRecord(%q) = %+v, want error", line, r)
			}
		})
	}
}

func TestHeaderRoundTrip(t *testing.T) {
	h := SessionHeader{Namespace: "ns", SessionID: "id-1", SessionKey: "agent:a:main", ParentSessionKey: "agent:a:main", CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	line, err := EncodeHeader(h)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeHeader(line)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(h, got); diff != "" {
		t.Errorf("header round trip (-want +got):\n%s", diff)
	}
	bad := map[string]string{
		"record":         `{"seq":1,"message":{"role":"user"}}`,
		"future version": `{"type":"session","version":99,"sessionId":"x"}`,
		"no id":          `{"type":"session","version":1}`,
	}
	for name, l := range bad {
		if _, err := DecodeHeader([]byte(l)); err == nil {
			t.Errorf("%s: DecodeHeader accepted %s", name, l)
		}
	}
}
