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

// Package userlimits holds the per-user bounds of the transcript-store's doors: how many
// streams one user holds open across /events, history and /mcp, and how fast the store
// calls the API server on one user's behalf. Users are the names TokenReview returns.
package userlimits

import "sync"

// Streams counts each user's open streams against one shared maximum, whichever door
// opened them.
type Streams struct {
	max  int
	mu   sync.Mutex
	open map[string]int
}

// NewStreams bounds every user to n open streams.
func NewStreams(n int) *Streams {
	return &Streams{max: n, open: map[string]int{}}
}

// Max is the bound.
func (s *Streams) Max() int { return s.max }

// Acquire takes one of user's streams; release gives it back (once).
func (s *Streams) Acquire(user string) (release func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[user] >= s.max {
		return nil, false
	}
	s.open[user]++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.open[user]--; s.open[user] <= 0 {
				delete(s.open, user)
			}
		})
	}, true
}
