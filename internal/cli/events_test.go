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

package cli

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// The plugin asks /events for the namespace and the sessions named by --session (repeated,
// keys or sessionIds) and prints each event, as text or JSON lines.
func TestEventsPrintsTheStream(t *testing.T) {
	var got *http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("id: e-1\nevent: session.message\ndata: {\"sessionKey\":\"agent:a:main\",\"seq\":3,\"record\":{\"seq\":3,\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hello\"}]}}}\n\n" +
			"id: e-2\nevent: sessions.changed\ndata: {\"phase\":\"message\",\"sessionKey\":\"agent:a:main\",\"stats\":{\"messageCount\":3,\"totalTokens\":9,\"lastPreview\":\"hello\"}}\n\n"))
	}))
	defer srv.Close()
	common := []string{"events", "--history-url", srv.URL, "--token-for-history", "tok", "-n", "team", "--session", "agent:a:main", "--session", "0b6f9a3e-1111-4222-8333-444455556666"}
	out, stderr, code := run(t, common...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got.URL.Path != "/events" || got.URL.Query().Get("namespace") != "team" || !slices.Equal(got.URL.Query()["session"], []string{"agent:a:main", "0b6f9a3e-1111-4222-8333-444455556666"}) ||
		got.Header.Get("Authorization") != "Bearer tok" {
		t.Fatalf("request %s %v", got.URL, got.Header)
	}
	want := "session.message\tagent:a:main\t3\tuser\thello\n" +
		"sessions.changed\tagent:a:main\tmessage\tmessages=3 tokens=9\thello\n"
	if out != want {
		t.Fatalf("text output:\n%q\nwant\n%q", out, want)
	}
	out, _, _ = run(t, append(common, "-o", "json")...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `{"event":"session.message","data":{"sessionKey"`) {
		t.Fatalf("json output:\n%s", out)
	}
}
