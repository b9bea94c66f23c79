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

package provider

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAnthropicToolRoundTrip(t *testing.T) {
	srv := newStub(t, reply(http.StatusOK, `{"id":"msg_1","type":"message","role":"assistant","model":"test-model-2",
		"content":[{"type":"thinking","thinking":"hm","signature":"x"},{"type":"text","text":"Let me look."},
			{"type":"tool_use","id":"toolu_c","name":"sessions_list","input":{"limit":5}}],
		"stop_reason":"tool_use","usage":{"input_tokens":40,"output_tokens":12,"cache_read_input_tokens":10}}`))
	p := mustNew(t, Anthropic, srv, newTestClock())

	req := toolConversation
	req.MaxTokens = 0 // the default must be filled in
	req.Thinking = "" // thinking: TestAnthropicThinking
	got, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := &Response{
		Text:       "Let me look.",
		ToolCalls:  []ToolCall{{ID: "toolu_c", Name: "sessions_list", Arguments: json.RawMessage(`{"limit":5}`)}},
		StopReason: "tool_calls", Model: "test-model-2",
		Usage:     Usage{InputTokens: 50, OutputTokens: 12, CachedInputTokens: 10},
		Reasoning: []Reasoning{{Text: "hm", Signature: "x"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}

	reqs := srv.requests()
	if len(reqs) != 1 {
		t.Fatalf("server saw %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	gotHeaders := map[string]string{"path": r.path, "x-api-key": r.header.Get("x-api-key"), "anthropic-version": r.header.Get("anthropic-version")}
	wantHeaders := map[string]string{"path": "/v1/messages", "x-api-key": "sk-test", "anthropic-version": "2023-06-01"}
	if diff := cmp.Diff(wantHeaders, gotHeaders); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
	// Tool results ride in user messages, merged with the next user words.
	// The tools and the system prompt end cached prefixes.
	wantBody := decodeJSON(t, `{"model":"test-model","max_tokens":4096,
		"system":[{"type":"text","text":"be brief","cache_control":{"type":"ephemeral"}}],
		"messages":[
			{"role":"user","content":[{"type":"text","text":"list sessions"}]},
			{"role":"assistant","content":[{"type":"text","text":"checking"},
				{"type":"tool_use","id":"call_a","name":"sessions_list","input":{"limit":2}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_a","content":"boom","is_error":true}]},
			{"role":"assistant","content":[{"type":"tool_use","id":"call_b","name":"sessions_list","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_b","content":"[]"},{"type":"text","text":"again"}]}],
		"tools":[{"name":"sessions_list","description":"List sessions",
			"input_schema":{"type":"object","properties":{"limit":{"type":"integer"}}},"cache_control":{"type":"ephemeral"}}]}`)
	if diff := cmp.Diff(wantBody, r.body); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

func TestAnthropicStream(t *testing.T) {
	ev := func(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }
	cases := map[string]streamCase{
		"text and tool use deltas": {
			events: []string{
				ev("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"test-model-2","content":[],"stop_reason":null,"usage":{"input_tokens":25,"output_tokens":1}}}`),
				ev("ping", `{"type":"ping"}`),
				ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
				ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me "}}`),
				ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"look."}}`),
				ev("content_block_stop", `{"type":"content_block_stop","index":0}`),
				ev("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_x","name":"sessions_list","input":{}}}`),
				ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}`),
				ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"lim"}}`),
				ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"it\": 3}"}}`),
				ev("content_block_stop", `{"type":"content_block_stop","index":1}`),
				ev("content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_y","name":"sessions_list","input":{}}}`),
				ev("content_block_stop", `{"type":"content_block_stop","index":2}`),
				ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":30}}`),
				ev("message_stop", `{"type":"message_stop"}`),
			},
			want: &Response{
				Text: "Let me look.",
				ToolCalls: []ToolCall{
					{ID: "toolu_x", Name: "sessions_list", Arguments: json.RawMessage(`{"limit": 3}`)},
					{ID: "toolu_y", Name: "sessions_list", Arguments: json.RawMessage(`{}`)},
				},
				StopReason: "tool_calls", Model: "test-model-2", Usage: Usage{InputTokens: 25, OutputTokens: 30},
			},
			wantRequests: 1,
		},
		"overloaded error event is retried": {
			events: []string{
				ev("message_start", `{"type":"message_start","message":{"type":"message","model":"m","usage":{"input_tokens":1}}}`),
				ev("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
			},
			wantErr:      &Error{StatusCode: 200, Type: ErrServer, Message: "overloaded_error", Retryable: true},
			wantRequests: 2,
		},
		"invalid request error event is terminal": {
			events:       []string{ev("error", `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long"}}`)},
			wantErr:      &Error{StatusCode: 200, Type: ErrBadRequest, Message: "invalid_request_error"},
			wantRequests: 1,
		},
		"stream without message_stop is retried": {
			events:       []string{ev("message_start", `{"type":"message_start","message":{"type":"message","model":"m"}}`)},
			wantErr:      &Error{StatusCode: 200, Type: ErrConnection, Retryable: true},
			wantRequests: 2,
		},
		"thinking deltas": {
			events: []string{
				ev("message_start", `{"type":"message_start","message":{"type":"message","model":"m","usage":{"input_tokens":5}}}`),
				ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`),
				ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me "}}`),
				ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"think."}}`),
				ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQB"}}`),
				ev("content_block_stop", `{"type":"content_block_stop","index":0}`),
				ev("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"opaque"}}`),
				ev("content_block_stop", `{"type":"content_block_stop","index":1}`),
				ev("content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}`),
				ev("content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"42"}}`),
				ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}}`),
				ev("message_stop", `{"type":"message_stop"}`),
			},
			want: &Response{Text: "42", StopReason: "stop", Model: "m", Usage: Usage{InputTokens: 5, OutputTokens: 9},
				Reasoning: []Reasoning{{Text: "Let me think.", Signature: "EqQB"}, {Redacted: "opaque"}}},
			wantRequests: 1,
		},
		"a thinking delta for another block": {
			events: []string{
				ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
				ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"x"}}`),
			},
			wantErr:      &Error{StatusCode: 200, Type: ErrMalformedResponse},
			wantRequests: 1,
		},
		"malformed event": {
			events:       []string{"event: message_start\ndata: {\"type\":\n\n"},
			wantErr:      &Error{StatusCode: 200, Type: ErrMalformedResponse},
			wantRequests: 1,
		},
	}
	runStreamCases(t, Anthropic, cases, Request{Messages: []Message{user("hi")}, MaxTokens: 64},
		`{"model":"test-model","max_tokens":64,"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`)
}

// Each thinking level is an extended-thinking budget, max_tokens keeps the reply's own
// allowance above it, and the signed thinking of an earlier reply goes back with it.
func TestAnthropicThinking(t *testing.T) {
	withThinking := []Message{user("why?"),
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "t1", Name: "sessions_list"}},
			Reasoning: []Reasoning{{Text: "I should look.", Signature: "sig"}, {Redacted: "opaque"}}},
		{Role: RoleTool, ToolCallID: "t1", ToolName: "sessions_list", Text: "[]"}}
	toolUse := `{"type":"tool_use","id":"t1","name":"sessions_list","input":{}}`
	sentBack := `{"role":"assistant","content":[{"type":"thinking","thinking":"I should look.","signature":"sig"},
		{"type":"redacted_thinking","data":"opaque"},` + toolUse + `]}`
	plain := `{"role":"assistant","content":[` + toolUse + `]}`
	body := func(maxTokens int, thinking, assistant string) string {
		if thinking != "" {
			thinking = `"thinking":` + thinking + `,`
		}
		return `{"model":"test-model","max_tokens":` + strconv.Itoa(maxTokens) + `,` + thinking + `"messages":[
			{"role":"user","content":[{"type":"text","text":"why?"}]},` + assistant + `,
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"[]"}]}]}`
	}
	cases := map[string]struct {
		level string
		want  string
	}{
		"unset: no thinking": {want: body(1000, "", plain)},
		"off: no thinking":   {level: "off", want: body(1000, "", plain)},
		"minimal":            {level: "minimal", want: body(2024, `{"type":"enabled","budget_tokens":1024}`, sentBack)},
		"low":                {level: "low", want: body(3048, `{"type":"enabled","budget_tokens":2048}`, sentBack)},
		"medium":             {level: "medium", want: body(9192, `{"type":"enabled","budget_tokens":8192}`, sentBack)},
		"high":               {level: "high", want: body(17384, `{"type":"enabled","budget_tokens":16384}`, sentBack)},
		"xhigh":              {level: "xhigh", want: body(25576, `{"type":"enabled","budget_tokens":24576}`, sentBack)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv := newStub(t, reply(http.StatusOK, `{"type":"message","model":"m","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn"}`))
			p := mustNew(t, Anthropic, srv, newTestClock())
			if _, err := p.Complete(context.Background(), Request{Messages: withThinking, MaxTokens: 1000, Thinking: tc.level}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(decodeJSON(t, tc.want), srv.requests()[0].body); diff != "" {
				t.Errorf("request body (-want +got):\n%s", diff)
			}
		})
	}
}
