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

package sessiontools

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agent-sessions/agent-session-operator/internal/caller"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

type countingStore struct{ reads int }

func (s *countingStore) Read(context.Context, string, string, transcript.ReadOptions) (transcript.Page, error) {
	s.reads++
	return transcript.Page{}, nil
}

// A transcript is read only after the access layer allows it: by a namespace-wide grant
// (one question for any number of sessions) or, failing that, by the session's own name.
func TestReadTranscriptAsksTheAccessLayer(t *testing.T) {
	denied := errors.New("forbidden")
	cases := map[string]struct {
		allowed   map[string]bool // names the caller may read; "" = the whole namespace
		names     []string
		wantAsked []string
		wantReads int
	}{
		"namespace grant: one question for three sessions": {
			allowed: map[string]bool{"": true}, names: []string{"a", "b", "c"},
			wantAsked: []string{"", "", ""}, wantReads: 3,
		},
		"one session granted: the others are refused": {
			allowed: map[string]bool{"b": true}, names: []string{"a", "b"},
			wantAsked: []string{"", "a", "", "b"}, wantReads: 1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var asked []string
			store := &countingStore{}
			c := &Call{Env: &Env{Store: store, Access: func(_ context.Context, r caller.Right, name string) error {
				if r != caller.ReadTranscript {
					t.Fatalf("asked %s, want ReadTranscript", r.Name)
				}
				asked = append(asked, name)
				if tc.allowed[name] {
					return nil
				}
				return denied
			}}, Namespace: "ns"}
			for _, n := range tc.names {
				_, err := c.readTranscript(t.Context(), n, "id-"+n, transcript.ReadOptions{})
				if want := tc.allowed[""] || tc.allowed[n]; (err == nil) != want {
					t.Fatalf("read %s: err = %v, want allowed %v", n, err, want)
				}
			}
			if diff := cmp.Diff(tc.wantAsked, asked); diff != "" {
				t.Errorf("questions (-want +got):\n%s", diff)
			}
			if store.reads != tc.wantReads {
				t.Errorf("store reads = %d, want %d", store.reads, tc.wantReads)
			}
		})
	}
}
