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
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
)

func user(text string) Message { return Message{Role: RoleUser, Text: text} }

func toolResult(id, text string) Message {
	return Message{Role: RoleTool, ToolCallID: id, ToolName: "t", Text: text}
}

var testScript = []ScriptRule{
	{Match: "^ping", Reply: "pong"},
	{Match: "(?i)research (.*)",
		ToolCalls: []ScriptToolCall{
			{Name: "sessions_spawn", Arguments: json.RawMessage(`{"task":"look up {{input}}","agentId":"research","n":1.50,"tags":["{{input}}"]}`)},
			{Name: "sessions_list"},
		},
		Reply: "spawned: {{toolResults}} for {{input}}"},
	{Match: "ping|pong", Reply: "second"},
	{Match: "announce", Reply: "ANNOUNCE_SKIP"},
}

func TestScripted(t *testing.T) {
	cases := map[string]struct {
		script []ScriptRule
		req    Request
		want   *Response
	}{
		"first match wins": {
			req:  Request{Messages: []Message{user("ping pong")}},
			want: &Response{Text: "pong", StopReason: "stop", Model: "scripted", Usage: Usage{InputTokens: 3, OutputTokens: 1}},
		},
		"later rule when earlier does not match": {
			req:  Request{Messages: []Message{user("a pong")}},
			want: &Response{Text: "second", StopReason: "stop", Model: "scripted", Usage: Usage{InputTokens: 2, OutputTokens: 2}},
		},
		"input is the last user message": {
			req: Request{Messages: []Message{
				user("ping"), {Role: RoleAssistant, Text: "pong"}, user("please announce"),
			}},
			want: &Response{Text: "ANNOUNCE_SKIP", StopReason: "stop", Model: "scripted", Usage: Usage{InputTokens: 6, OutputTokens: 4}},
		},
		"no match echoes": {
			req:  Request{System: "sys", Messages: []Message{user("hello")}},
			want: &Response{Text: "echo: hello", StopReason: "stop", Model: "scripted", Usage: Usage{InputTokens: 2, OutputTokens: 3}},
		},
		"no user message echoes empty input": {
			req:  Request{},
			want: &Response{Text: "echo: ", StopReason: "stop", Model: "scripted", Usage: Usage{OutputTokens: 2}},
		},
		"tool calls on the first model call": {
			req: Request{Messages: []Message{user("Research <cats>")}},
			want: &Response{
				ToolCalls: []ToolCall{
					{ID: "call_1", Name: "sessions_spawn", Arguments: json.RawMessage(`{"agentId":"research","n":1.50,"tags":["Research <cats>"],"task":"look up Research <cats>"}`)},
					{ID: "call_2", Name: "sessions_list", Arguments: json.RawMessage(`{}`)},
				},
				StopReason: "tool_calls", Model: "scripted",
				Usage: Usage{InputTokens: 4, OutputTokens: 24}, // 93 bytes of arguments
			},
		},
		"reply with tool results after the calls": {
			req: Request{Messages: []Message{
				user("research x"),
				{Role: RoleAssistant, ToolCalls: []ToolCall{
					{ID: "call_1", Name: "sessions_spawn", Arguments: json.RawMessage(`{"a":1}`)},
					{ID: "call_2", Name: "sessions_list", Arguments: json.RawMessage(`{}`)},
				}},
				toolResult("call_1", "run-1"), toolResult("call_2", "[]"),
			}},
			want: &Response{Text: "spawned: run-1\n[] for research x", StopReason: "stop", Model: "scripted",
				Usage: Usage{InputTokens: 7, OutputTokens: 8}}, // 26 and 32 bytes
		},
		"tool call ids continue the conversation's count": {
			req: Request{Messages: []Message{
				user("x"),
				{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "call_1", Name: "a", Arguments: json.RawMessage(`{}`)}}},
				toolResult("call_1", "r"),
				{Role: RoleAssistant, Text: "done"},
				user("research y"),
			}},
			want: &Response{
				ToolCalls: []ToolCall{
					{ID: "call_2", Name: "sessions_spawn", Arguments: json.RawMessage(`{"agentId":"research","n":1.50,"tags":["research y"],"task":"look up research y"}`)},
					{ID: "call_3", Name: "sessions_list", Arguments: json.RawMessage(`{}`)},
				},
				StopReason: "tool_calls", Model: "scripted",
				Usage: Usage{InputTokens: 5, OutputTokens: 21},
			},
		},
		"placeholder text in the input is not expanded again": {
			script: []ScriptRule{{Reply: "[{{input}}|{{toolResults}}]"}},
			req:    Request{Messages: []Message{user("{{toolResults}}")}},
			want:   &Response{Text: "[{{toolResults}}|]", StopReason: "stop", Model: "scripted", Usage: Usage{InputTokens: 4, OutputTokens: 5}},
		},
		"empty match matches anything; request model wins": {
			script: []ScriptRule{{Reply: "any"}},
			req:    Request{Model: "m1", Messages: []Message{user("")}},
			want:   &Response{Text: "any", StopReason: "stop", Model: "m1", Usage: Usage{OutputTokens: 1}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			script := tc.script
			if script == nil {
				script = testScript
			}
			p, err := New(Config{Provider: "scripted", Script: script})
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Complete(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScriptedDelay(t *testing.T) {
	fc := clocktesting.NewFakeClock(time.Unix(0, 0))
	p, err := New(Config{Provider: "scripted", Clock: fc, Script: []ScriptRule{{Match: "slow", Delay: 5 * time.Second, Reply: "done"}}})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("answers after the delay", func(t *testing.T) {
		done := make(chan *Response)
		go func() {
			resp, err := p.Complete(context.Background(), Request{Messages: []Message{user("slow")}})
			if err != nil {
				t.Error(err)
			}
			done <- resp
		}()
		waitForWaiter(t, fc)
		fc.Step(5*time.Second - time.Nanosecond)
		if !fc.HasWaiters() {
			t.Fatal("answered before the delay passed")
		}
		fc.Step(time.Nanosecond)
		if got := <-done; got == nil || got.Text != "done" {
			t.Errorf("got %+v, want text done", got)
		}
	})

	t.Run("ctx cancel ends the wait", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error)
		go func() {
			_, err := p.Complete(ctx, Request{Messages: []Message{user("slow")}})
			errc <- err
		}()
		waitForWaiter(t, fc)
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	})

	t.Run("deadline during the wait is a timeout", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		defer cancel()
		_, err := p.Complete(ctx, Request{Messages: []Message{user("slow")}})
		var perr *Error
		if !errors.As(err, &perr) || perr.Type != ErrTimeout || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want timeout Error", err)
		}
	})
}

func TestNewErrors(t *testing.T) {
	cases := map[string]struct {
		cfg  Config
		want string
	}{
		"unknown provider":   {Config{Provider: "gemini"}, `unknown model provider "gemini"`},
		"bad regex":          {Config{Provider: "scripted", Script: []ScriptRule{{Match: "ok"}, {Match: "(unclosed"}}}, `rule 1: match "(unclosed" is not a valid RE2 expression`},
		"backreference":      {Config{Provider: "scripted", Script: []ScriptRule{{Match: `(a)\1`}}}, "not a valid RE2"},
		"bad arguments":      {Config{Provider: "scripted", Script: []ScriptRule{{ToolCalls: []ScriptToolCall{{Name: "x", Arguments: json.RawMessage(`{`)}}}}}, "not valid JSON"},
		"nameless tool call": {Config{Provider: "scripted", Script: []ScriptRule{{ToolCalls: []ScriptToolCall{{}}}}}, "has no name"},
		"negative delay":     {Config{Provider: "scripted", Script: []ScriptRule{{Delay: -time.Second}}}, "negative"},
		"openai model":       {Config{Provider: "openai"}, "openai provider: a model name is required"},
		"anthropic model":    {Config{Provider: "anthropic"}, "anthropic provider: a model name is required"},
		"bad base URL":       {Config{Provider: "openai", Model: "m", BaseURL: "localhost:8080"}, "not an http(s) URL"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := New(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestNewNames(t *testing.T) {
	got := map[string]string{}
	for _, name := range []string{"", "scripted", "openai", "anthropic"} {
		p, err := New(Config{Provider: name, Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		got[name] = p.Name()
	}
	want := map[string]string{"": "scripted", "scripted": "scripted", "openai": "openai", "anthropic": "anthropic"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}

func BenchmarkScripted(b *testing.B) {
	p, err := New(Config{Provider: "scripted", Script: testScript})
	if err != nil {
		b.Fatal(err)
	}
	req := Request{System: "you are a test", Messages: []Message{user("hello there"), {Role: RoleAssistant, Text: "hi"}, user("ping")}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Complete(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// {{input}} 400 times in a reply to a 64 KiB message ends at MaxOutputText, cut for length,
// instead of a 26 MB answer.
func TestScriptedExpansionIsBounded(t *testing.T) {
	p, err := New(Config{Provider: "scripted", Script: []ScriptRule{{Reply: strings.Repeat("{{input}}", 400)}}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Complete(context.Background(), Request{Messages: []Message{{Role: RoleUser, Text: strings.Repeat("é", 32<<10)}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Text) > MaxOutputText || len(resp.Text) < MaxOutputText-4 || resp.StopReason != StopReasonLength || !utf8.ValidString(resp.Text) {
		t.Fatalf("reply of %d bytes (stop %q, valid UTF-8 %v), want at most %d cut for length", len(resp.Text), resp.StopReason, utf8.ValidString(resp.Text), MaxOutputText)
	}
}

// Tool call arguments that would expand past the bound are refused before they are built.
func TestScriptedToolArgumentExpansionIsBounded(t *testing.T) {
	args := `{"message":"` + strings.Repeat("{{input}}", 400) + `"}`
	p, err := New(Config{Provider: "scripted", Script: []ScriptRule{{ToolCalls: []ScriptToolCall{{Name: "sessions_send", Arguments: json.RawMessage(args)}}}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Complete(context.Background(), Request{Messages: []Message{{Role: RoleUser, Text: strings.Repeat("a", 64<<10)}}})
	if err == nil || !strings.Contains(err.Error(), "would expand to") {
		t.Fatalf("got %v, want a refusal of the expansion", err)
	}
}

// A delay longer than MaxScriptDelay waits MaxScriptDelay.
func TestScriptedDelayIsClamped(t *testing.T) {
	fc := clocktesting.NewFakeClock(time.Now())
	p, err := New(Config{Provider: "scripted", Clock: fc, Script: []ScriptRule{{Delay: 8760 * time.Hour, Reply: "late"}}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := p.Complete(context.Background(), Request{Messages: []Message{{Role: RoleUser, Text: "x"}}})
		done <- err
	}()
	waitForWaiter(t, fc)
	fc.Step(MaxScriptDelay)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
