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

package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/client"
)

// bigMessages is the size of the large session whose tail history reads. OpenClaw's gateway
// does not start on an imported 100,000-message transcript (its startup check outruns a
// fixed 5 s deadline), so both systems hold 20,000.
const bigMessages = 20000

// bigSession is the index of the large session among ourKey/theirKey.
const bigSession = 9999

// bigText is a message of about the size a chat reply has.
func bigText(i int) string {
	return "message " + strconv.Itoa(i) + ": " + strings.Repeat("lorem ipsum dolor sit amet ", 6)
}

// seedOurBigSession appends bigMessages to our large session through the transcript-store's
// internal API, in batches, as the manager's turns would.
func (p *peers) seedOurBigSession(ctx context.Context) error {
	if err := ensureOurSession(ctx, p.cl, bigSession); err != nil {
		return err
	}
	id, err := ourSessionID(ctx, p.cl, bigSession)
	if err != nil {
		return err
	}
	st := client.NewClient(p.ours.TranscriptSocket())
	const batch = 500
	for start := 0; start < bigMessages; start += batch {
		reqs := make([]transcript.AppendRequest, 0, batch)
		for i := start; i < start+batch && i < bigMessages; i++ {
			role := transcript.RoleUser
			if i%2 == 1 {
				role = transcript.RoleAssistant
			}
			reqs = append(reqs, transcript.AppendRequest{IdempotencyKey: "seed/" + strconv.Itoa(i),
				Message: transcript.Message{Role: role, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: bigText(i)}}}})
		}
		if _, err := st.Append(ctx, peerNS, id, reqs...); err != nil {
			return fmt.Errorf("seeding our large session: %w", err)
		}
	}
	return nil
}

// seedTheirBigSession fills OpenClaw's large session with chat.inject (an assistant note
// appended to the transcript, no agent run) over 8 connections; the session is created by
// one turn first.
func (p *peers) seedTheirBigSession(ctx context.Context) error {
	if err := p.theirSend(ctx, theirKey(bigSession)); err != nil {
		return err
	}
	have, err := p.theirMessageCount(ctx, bigSession)
	if err != nil {
		return err
	}
	var next atomic.Int64
	next.Store(have)
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	for range 8 {
		wg.Go(func() {
			rc, err := dialGateway(ctx, p.theirs)
			if err != nil {
				once.Do(func() { firstErr = err })
				return
			}
			defer rc.close()
			for {
				i := int(next.Add(1)) - 1
				if i >= bigMessages {
					return
				}
				if _, err := rc.call(ctx, "chat.inject", map[string]any{"sessionKey": theirKey(bigSession), "message": bigText(i)}); err != nil {
					once.Do(func() { firstErr = fmt.Errorf("chat.inject %d: %w", i, err) })
					return
				}
			}
		})
	}
	wg.Wait()
	if firstErr == nil {
		fmt.Fprintf(logOut, "bench-peer: OpenClaw's large session seeded in %s\n", time.Since(start).Round(time.Second))
	}
	return firstErr
}
