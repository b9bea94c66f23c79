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
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/agent-sessions/agent-session-operator/internal/sse"
)

func TestStreamLineTooLongIsMalformed(t *testing.T) {
	_, err := nextEvent(sse.NewReader(strings.NewReader("data: " + strings.Repeat("x", sse.MaxLine+1) + "\n\n")))
	var perr *Error
	if !errors.As(err, &perr) || perr.Type != ErrMalformedResponse {
		t.Errorf("err = %v, want malformed_response", err)
	}
}

// FuzzStreamDecoders feeds arbitrary bodies to both stream decoders: a
// broken or hostile server must get an error, never a panic.
func FuzzStreamDecoders(f *testing.F) {
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":3,\"function\":{\"arguments\":\"{\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n"))
	f.Add([]byte("data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"n\"}}\n\ndata: {\"type\":\"message_stop\"}\n\n"))
	oai, ant := newOpenAI(Config{Provider: OpenAI}), newAnthropic(Config{Provider: Anthropic})
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, decode := range []decodeFunc{oai.decodeStream, ant.decodeStream} {
			resp, err := decode(bytes.NewReader(in))
			if (resp == nil) == (err == nil) {
				t.Fatalf("resp %v with err %v", resp, err)
			}
		}
	})
}
