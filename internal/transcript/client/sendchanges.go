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

package client

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// SessionSend changes are best effort, as a watch is: the manager never waits for them. At
// most sendQueue wait for the one sender, which posts up to transcript.MaxSendChanges (and
// sendBatchBytes) at a time; a change that finds the queue full or the store down is dropped, and a subscriber
// that must not miss one reads the object itself.
const (
	sendQueue      = 1024
	sendBatchBytes = 2 << 20
	sendTimeout    = 5 * time.Second
)

// PublishSendChange queues one SessionSend change for the store's /events.
func (c *Client) PublishSendChange(ch transcript.SendChange) {
	c.sendsOnce.Do(func() {
		c.sends = make(chan transcript.SendChange, sendQueue)
		go c.sendChanges()
	})
	select {
	case c.sends <- ch:
	default: // the store is behind: the change is dropped
	}
}

// sendChanges posts the queued changes in batches, oldest first, for the life of the client.
func (c *Client) sendChanges() {
	for ch := range c.sends {
		batch := transcript.SendChanges{Changes: []transcript.SendChange{ch}}
		size := len(ch.Object)
	more:
		for len(batch.Changes) < transcript.MaxSendChanges && size < sendBatchBytes {
			select {
			case ch := <-c.sends:
				batch.Changes = append(batch.Changes, ch)
				size += len(ch.Object)
			default:
				break more
			}
		}
		body, err := json.Marshal(batch)
		if err != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), sendTimeout)
		if resp, err := c.once(ctx, http.MethodPost, transcript.APISendChangesPath, body); err == nil {
			_ = resp.Body.Close()
		}
		cancel()
	}
}
