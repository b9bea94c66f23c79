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
	"testing"

	"github.com/google/go-cmp/cmp"
)

// toolConversation is a turn that already made one tool call and now asks
// again: every message shape the providers translate.
var toolConversation = Request{
	System: "be brief",
	Messages: []Message{
		user("list sessions"),
		{Role: RoleAssistant, Text: "checking", ToolCalls: []ToolCall{{ID: "call_a", Name: "sessions_list", Arguments: json.RawMessage(`{"limit":2}`)}}},
		{Role: RoleTool, ToolCallID: "call_a", ToolName: "sessions_list", Text: "boom", IsError: true},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "call_b", Name: "sessions_list"}}},
		{Role: RoleTool, ToolCallID: "call_b", ToolName: "sessions_list", Text: "[]"},
		user("again"),
	},
	Tools: []Tool{{Name: "sessions_list", Description: "List sessions",
		Parameters: json.RawMessage(`{"type":"object","properties":{"limit":{"type":"integer"}}}`)}},
	MaxTokens: 100,
	Thinking:  "high",
}

func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return v
}

func TestOpenAIToolRoundTrip(t *testing.T) {
	srv := newStub(t, reply(http.StatusOK, `{"id":"c1","object":"chat.completion","model":"test-model-0613",
		"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[
			{"id":"call_c","type":"function","function":{"name":"sessions_list","arguments":"{\"limit\":5}"}},
			{"id":"call_d","type":"function","function":{"name":"sessions_send","arguments":"not json"}}]},
		"finish_reason":"tool_calls"}],
		"usage":{"prompt_tokens":50,"completion_tokens":10,"total_tokens":60,"cost":0.0012}}`))
	p := mustNew(t, OpenAI, srv, newTestClock())

	got, err := p.Complete(context.Background(), toolConversation)
	if err != nil {
		t.Fatal(err)
	}
	want := &Response{
		ToolCalls: []ToolCall{
			{ID: "call_c", Name: "sessions_list", Arguments: json.RawMessage(`{"limit":5}`)},
			{ID: "call_d", Name: "sessions_send", Arguments: json.RawMessage(`"not json"`)},
		},
		StopReason: "tool_calls", Model: "test-model-0613",
		Usage: Usage{InputTokens: 50, OutputTokens: 10, Cost: 0.0012},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}

	reqs := srv.requests()
	if len(reqs) != 1 {
		t.Fatalf("server saw %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.path != "/v1/chat/completions" || r.header.Get("Authorization") != "Bearer sk-test" {
		t.Errorf("path %q, Authorization %q", r.path, r.header.Get("Authorization"))
	}
	wantBody := decodeJSON(t, `{"model":"test-model","max_tokens":100,"reasoning_effort":"high",
		"messages":[
			{"role":"system","content":"be brief"},
			{"role":"user","content":"list sessions"},
			{"role":"assistant","content":"checking","tool_calls":[{"id":"call_a","type":"function","function":{"name":"sessions_list","arguments":"{\"limit\":2}"}}]},
			{"role":"tool","tool_call_id":"call_a","content":"boom"},
			{"role":"assistant","content":null,"tool_calls":[{"id":"call_b","type":"function","function":{"name":"sessions_list","arguments":"{}"}}]},
			{"role":"tool","tool_call_id":"call_b","content":"[]"},
			{"role":"user","content":"again"}],
		"tools":[{"type":"function","function":{"name":"sessions_list","description":"List sessions",
			"parameters":{"type":"object","properties":{"limit":{"type":"integer"}}}}}]}`)
	if diff := cmp.Diff(wantBody, r.body); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

func TestOpenAIStream(t *testing.T) {
	cases := map[string]streamCase{
		"text and tool call deltas": {
			events: []string{
				": keepalive\n\n",
				`data: {"id":"c1","model":"test-model-0613","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}` + "\n\n",
				`data: {"choices":[{"index":0,"delta":{"content":"Let me "}}]}` + "\r\n\r\n",
				`data: {"choices":[{"index":0,"delta":{"content":"look."}}]}` + "\n\n",
				`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_x","type":"function","function":{"name":"sessions_list","arguments":""}}]}}]}` + "\n\n",
				`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"lim"}}]}}]}` + "\n\n",
				`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_y","type":"function","function":{"name":"sessions_send","arguments":"{\"to\":"}}]}}]}` + "\n\n",
				`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"it\":3}"}}]}}]}` + "\n\n",
				`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\"main\"}"}}]}}]}` + "\n\n",
				`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n",
				`data: {"choices":[],"usage":{"prompt_tokens":20,"completion_tokens":7}}` + "\n\n",
				"data: [DONE]\n\n",
			},
			want: &Response{
				Text: "Let me look.",
				ToolCalls: []ToolCall{
					{ID: "call_x", Name: "sessions_list", Arguments: json.RawMessage(`{"limit":3}`)},
					{ID: "call_y", Name: "sessions_send", Arguments: json.RawMessage(`{"to":"main"}`)},
				},
				StopReason: "tool_calls", Model: "test-model-0613", Usage: Usage{InputTokens: 20, OutputTokens: 7},
			},
			wantRequests: 1,
		},
		"no [DONE] after finish is tolerated": {
			events: []string{
				`data: {"model":"m","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}` + "\n",
			},
			want:         &Response{Text: "hi", StopReason: "stop", Model: "m"},
			wantRequests: 1,
		},
		"a server that ignores stream answers whole JSON": {
			events:       []string{"\n " + `{"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`},
			want:         &Response{Text: "hi", StopReason: "stop", Model: "m", Usage: Usage{InputTokens: 3, OutputTokens: 1}},
			wantRequests: 1,
		},
		"cut stream is retried": {
			events:       []string{`data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}` + "\n\n"},
			wantErr:      &Error{StatusCode: 200, Type: ErrConnection, Retryable: true},
			wantRequests: 2,
		},
		"error chunk": {
			events:       []string{`data: {"error":{"message":"model overloaded","type":"server_error"}}` + "\n\n"},
			wantErr:      &Error{StatusCode: 200, Type: ErrServer, Message: "server_error", Retryable: true},
			wantRequests: 2,
		},
		"malformed chunk": {
			events:       []string{"data: {not json}\n\n"},
			wantErr:      &Error{StatusCode: 200, Type: ErrMalformedResponse},
			wantRequests: 1,
		},
	}
	runStreamCases(t, OpenAI, cases, Request{Messages: []Message{user("hi")}},
		`{"model":"test-model","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)
}

// Each thinking level is the reasoning_effort of its name; off sends none.
func TestOpenAIReasoningEffort(t *testing.T) {
	cases := map[string]struct{ level, want string }{
		"unset":   {},
		"off":     {level: "off"},
		"minimal": {level: "minimal", want: "minimal"},
		"low":     {level: "low", want: "low"},
		"medium":  {level: "medium", want: "medium"},
		"high":    {level: "high", want: "high"},
		"xhigh":   {level: "xhigh", want: "xhigh"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv := newStub(t, reply(http.StatusOK, `{"model":"m","choices":[{"message":{"content":"ok"},"finish_reason":"stop"}]}`))
			p := mustNew(t, OpenAI, srv, newTestClock())
			if _, err := p.Complete(context.Background(), Request{Messages: []Message{user("hi")}, Thinking: tc.level}); err != nil {
				t.Fatal(err)
			}
			body := srv.requests()[0].body.(map[string]any)
			got, sent := body["reasoning_effort"]
			if tc.want == "" && sent {
				t.Errorf("reasoning_effort %v sent, want none", got)
			}
			if tc.want != "" && got != tc.want {
				t.Errorf("reasoning_effort = %v, want %q", got, tc.want)
			}
		})
	}
}
