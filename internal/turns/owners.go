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

package turns

// owners is the engine's bookkeeping of turns by the object that asked for them. An entry
// lives while its owner has a turn queued or running or an outcome it has not released;
// Abort releases it. A turn cancelled by Abort records no outcome when it ends, so a
// deleted owner leaves nothing behind. Guarded by Engine.mu.
type owners map[Owner]*ownerTurns

type ownerTurns struct {
	live    map[string]*job // queued or running, by turn id
	results map[string]TurnResult
}

func (o owners) entry(owner Owner) *ownerTurns {
	t, ok := o[owner]
	if !ok {
		t = &ownerTurns{live: map[string]*job{}, results: map[string]TurnResult{}}
		o[owner] = t
	}
	return t
}

// add records a submitted turn.
func (o owners) add(j *job) { o.entry(j.req.Owner).live[j.req.ID] = j }

// finish moves an ended turn to its owner's outcomes, unless the owner released it.
func (o owners) finish(j *job, res TurnResult) {
	t, ok := o[j.req.Owner]
	if !ok || t.live[j.req.ID] != j {
		return
	}
	delete(t.live, j.req.ID)
	t.results[j.req.ID] = res
}

func (o owners) result(owner Owner, id string) (TurnResult, bool) {
	t, ok := o[owner]
	if !ok {
		return TurnResult{}, false
	}
	r, ok := t.results[id]
	return r, ok
}

// release forgets owner and returns its queued and running turns, for the caller to cancel.
func (o owners) release(owner Owner) []*job {
	t, ok := o[owner]
	if !ok {
		return nil
	}
	delete(o, owner)
	live := make([]*job, 0, len(t.live))
	for _, j := range t.live {
		live = append(live, j)
	}
	return live
}
