package transcript

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"
)

const testNS = "team-a"

func textMsg(role, text string) Message {
	return Message{Role: role, Content: []ContentBlock{{Type: BlockText, Text: text}}}
}

func toolResult(text string) Message {
	return Message{Role: RoleToolResult, ToolCallID: "call-1", ToolName: "sessions_list", Content: []ContentBlock{{Type: BlockText, Text: text}}}
}

func openStore(t *testing.T, root string, opts ...Option) *FileStore {
	t.Helper()
	st, err := OpenFileStore(root, opts...)
	if err != nil {
		t.Fatalf("OpenFileStore: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func createSession(t *testing.T, s Store, id, key string) {
	t.Helper()
	_, err := s.CreateSession(context.Background(), SessionHeader{
		Namespace: testNS, SessionID: id, SessionKey: key, CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	})
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
}

// appendN appends n messages; every third is a tool result when withTools is set.
func appendN(t *testing.T, s Store, id string, n int, withTools bool) {
	t.Helper()
	for i := 1; i <= n; i++ {
		m := textMsg(RoleUser, fmt.Sprintf("message %d", i))
		if withTools && i%3 == 0 {
			m = toolResult(fmt.Sprintf("tool %d", i))
		}
		if _, err := s.Append(context.Background(), testNS, id, AppendRequest{IdempotencyKey: fmt.Sprintf("k%d", i), Message: m}); err != nil {
			t.Fatalf("Append %d: %v", i, err)
		}
	}
}

func seqs(recs []Record) []int64 {
	out := make([]int64, len(recs))
	for i, r := range recs {
		out[i] = r.Seq
	}
	return out
}

// startAPI serves the internal API for st on a unix socket and returns a Client for it.
func startAPI(t *testing.T, st Store) *Client {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "t.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	srv := &http.Server{Handler: NewAPIHandler(st)}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return NewClient(sock)
}

func mustTime(s string) time.Time {
	ts, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return ts
}
