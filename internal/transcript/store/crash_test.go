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

package store_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/transcripttest"
)

const (
	crashChildEnv = "TRANSCRIPT_CRASH_CHILD_ROOT"
	crashStartEnv = "TRANSCRIPT_CRASH_CHILD_START"
	crashKills    = 25
)

// TestCrashChild is the appender the crash test SIGKILLs; it does nothing in a normal run.
func TestCrashChild(t *testing.T) {
	root := os.Getenv(crashChildEnv)
	if root == "" {
		t.Skip("only runs as the child of TestCrashRecovery")
	}
	start, _ := strconv.Atoi(os.Getenv(crashStartEnv))
	st, err := store.OpenFileStore(root)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	ctx := context.Background()
	if _, err := st.CreateSession(ctx, transcript.SessionHeader{Namespace: transcripttest.Namespace, SessionID: "crash", SessionKey: "agent:c:main"}); err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	fmt.Println("ready")
	next := atomic.Int64{}
	next.Store(int64(start))
	// Several writers so that kills land inside group commits, not only between appends.
	for range 4 {
		go func() {
			for {
				n := next.Add(1) - 1
				key := "k-" + strconv.FormatInt(n, 10)
				recs, err := st.Append(ctx, transcripttest.Namespace, "crash", transcript.AppendRequest{IdempotencyKey: key, Message: transcripttest.TextMessage(transcript.RoleUser, strings.Repeat("x", int(n%300)))})
				if err != nil {
					fmt.Println("error", err)
					os.Exit(2)
				}
				fmt.Printf("ack %s %d\n", key, recs[0].Seq)
			}
		}()
	}
	select {}
}

// TestCrashRecovery SIGKILLs an appending child at random moments and checks after each kill
// that every acknowledged append is on disk with its acknowledged seq, nothing is duplicated,
// and the file reads clean.
func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test re-executes the test binary")
	}
	root := t.TempDir()
	acked := map[string]int64{}
	maxAcked := -1
	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	for kill := range crashKills {
		start := max(0, maxAcked-3) // replay a few keys, acknowledged or not
		lines := runAndKill(t, root, start, time.Duration(rng.IntN(40))*time.Millisecond)
		for _, l := range lines {
			var key string
			var seq int64
			if _, err := fmt.Sscanf(l, "ack %s %d", &key, &seq); err != nil {
				t.Fatalf("kill %d: child said %q", kill, l)
			}
			if prev, ok := acked[key]; ok && prev != seq {
				t.Fatalf("kill %d: key %s acknowledged as seq %d and %d", kill, key, prev, seq)
			}
			acked[key] = seq
			n, _ := strconv.Atoi(strings.TrimPrefix(key, "k-"))
			maxAcked = max(maxAcked, n)
		}
		verifyCrashState(t, root, kill, acked)
	}
	t.Logf("%d kills, %d acknowledged appends verified", crashKills, len(acked))
}

func runAndKill(t *testing.T, root string, start int, after time.Duration) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+root, crashStartEnv+"="+strconv.Itoa(start))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	if !sc.Scan() || sc.Text() != "ready" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("child did not start: %q %v", sc.Text(), sc.Err())
	}
	linesc := make(chan []string)
	go func() {
		var lines []string
		for sc.Scan() {
			if l := sc.Text(); strings.HasPrefix(l, "ack ") {
				lines = append(lines, l)
			} else if l != "" && !strings.HasPrefix(l, "PASS") {
				lines = append(lines, l)
			}
		}
		linesc <- lines
	}()
	time.Sleep(after)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	lines := <-linesc
	_ = cmd.Wait()
	return lines
}

func verifyCrashState(t *testing.T, root string, kill int, acked map[string]int64) {
	t.Helper()
	st, err := store.OpenFileStore(root)
	if err != nil {
		t.Fatalf("kill %d: reopen: %v", kill, err)
	}
	defer st.Close()
	if n, err := st.Corrupt(transcripttest.Namespace, "crash"); err != nil || n != 0 {
		t.Fatalf("kill %d: corrupt lines %d (%v)", kill, n, err)
	}
	onDisk := map[string]int64{}
	for before := int64(0); ; {
		page, err := st.Read(context.Background(), transcripttest.Namespace, "crash", transcript.ReadOptions{Limit: transcript.MaxLimit, BeforeSeq: before, IncludeTools: true})
		if err != nil {
			t.Fatalf("kill %d: read: %v", kill, err)
		}
		for _, r := range page.Messages {
			if _, dup := onDisk[r.IdempotencyKey]; dup {
				t.Fatalf("kill %d: key %s stored twice", kill, r.IdempotencyKey)
			}
			onDisk[r.IdempotencyKey] = r.Seq
		}
		if !page.HasMore {
			break
		}
		before = page.Messages[0].Seq
	}
	stats, _ := st.Stats(context.Background(), transcripttest.Namespace, "crash")
	if stats.MessageCount != int64(len(onDisk)) {
		t.Fatalf("kill %d: stats count %d, read %d", kill, stats.MessageCount, len(onDisk))
	}
	for key, seq := range acked {
		if got, ok := onDisk[key]; !ok || got != seq {
			t.Fatalf("kill %d: acknowledged %s seq %d, on disk %d (present %v)", kill, key, seq, got, ok)
		}
	}
	// Seqs are dense: a truncated tail gives its seqs to the next appends.
	seen := make([]bool, len(onDisk)+1)
	for _, seq := range onDisk {
		if seq < 1 || seq > int64(len(onDisk)) || seen[seq] {
			t.Fatalf("kill %d: seqs not dense 1..%d (got %d)", kill, len(onDisk), seq)
		}
		seen[seq] = true
	}
	assertCleanFile(t, filepath.Join(root, transcripttest.Namespace, "crash.jsonl"), int64(len(onDisk)))
}
