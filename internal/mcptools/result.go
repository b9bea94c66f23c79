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

package mcptools

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
)

// MaxResultBytes bounds the text of one tool result handed to the model and the transcript;
// a server cannot flood a turn's context.
const MaxResultBytes = 64 << 10

// Result is a tool call's outcome as the model sees it.
type Result struct {
	// Text is what the model reads: the result's text content, or its structured content
	// as JSON, with other content kinds summarized.
	Text string
	// IsError says the call failed: the server said isError, or the call did not complete.
	IsError bool
	// ChainRefused is the chain limit the server marked the result refused at (the chain
	// extension's _meta, policy.RefusedLimit); "" when it marked none.
	ChainRefused string
}

// errorResult is the result of a call that did not complete (server down, slow, refused).
func errorResult(format string, args ...any) Result {
	return Result{Text: fmt.Sprintf(format, args...), IsError: true}
}

// toResult maps a server's CallToolResult onto what the model reads.
func toResult(r *mcp.CallToolResult) Result {
	var parts []string
	for _, c := range r.Content {
		parts = append(parts, contentText(c))
	}
	if r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil && !containsJSON(parts, b) {
			parts = append(parts, string(b))
		}
	}
	text := strings.Join(parts, "\n")
	if text == "" && r.IsError {
		text = "the tool reported an error without details"
	}
	res := Result{Text: truncate(text, MaxResultBytes), IsError: r.IsError}
	if r.IsError {
		res.ChainRefused = policy.RefusedLimit(r.Meta[policy.ChainMetaKey])
	}
	return res
}

// contentText is one content block as text; binary blocks are described, not inlined.
func contentText(c mcp.Content) string {
	switch c := c.(type) {
	case *mcp.TextContent:
		return c.Text
	case *mcp.ImageContent:
		return fmt.Sprintf("[image %s, %d bytes]", c.MIMEType, len(c.Data))
	case *mcp.AudioContent:
		return fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, len(c.Data))
	case *mcp.ResourceLink:
		return fmt.Sprintf("[resource link %s %s]", c.URI, c.Name)
	case *mcp.EmbeddedResource:
		if c.Resource == nil {
			return "[resource]"
		}
		if c.Resource.Text != "" {
			return c.Resource.Text
		}
		return fmt.Sprintf("[resource %s %s, %d bytes]", c.Resource.URI, c.Resource.MIMEType, len(c.Resource.Blob))
	default:
		return fmt.Sprintf("[%T content]", c)
	}
}

// containsJSON says whether one of the text parts already is the JSON value b (servers
// usually repeat structured content as text for older clients, in any key order).
func containsJSON(parts []string, b []byte) bool {
	var want any
	if json.Unmarshal(b, &want) != nil {
		return false
	}
	for _, p := range parts {
		var got any
		if json.Unmarshal([]byte(p), &got) == nil && reflect.DeepEqual(got, want) {
			return true
		}
	}
	return false
}

// truncate cuts s to at most n bytes on a rune boundary and says how much was cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head := textutil.Prefix(s, n)
	return head + fmt.Sprintf("\n[truncated: %d more bytes]", len(s)-len(head))
}
