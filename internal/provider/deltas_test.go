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
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A streamed reply's text reaches the ctx's observer piece by piece, for both wire formats;
// tool-call arguments and thinking do not.
func TestTextDeltasSeeEachPiece(t *testing.T) {
	cases := map[string][]string{
		OpenAI: {
			`data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}` + "\n\n",
			`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"t","arguments":"{}"}}]}}]}` + "\n\n",
			`data: {"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]}` + "\n\n",
			"data: [DONE]\n\n",
		},
		Anthropic: {
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":{\"input_tokens\":1}}}\n\n",
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n",
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hmm\"}}\n\n",
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\n\n",
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"lo\"}}\n\n",
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n",
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
		},
	}
	for name, events := range cases {
		t.Run(name, func(t *testing.T) {
			srv := newStub(t, sseStream(events...))
			p := mustNew(t, name, srv, newTestClock(), func(c *Config) { c.Stream = true })
			var got []string
			ctx := WithTextDeltas(context.Background(), func(s string) { got = append(got, s) })
			resp, err := p.Complete(ctx, Request{Messages: []Message{user("hi")}, MaxTokens: 8})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"Hel", "lo"}, got); diff != "" {
				t.Errorf("deltas (-want +got):\n%s", diff)
			}
			if resp.Text != "Hello" {
				t.Errorf("text %q, want the whole reply", resp.Text)
			}
		})
	}
}
