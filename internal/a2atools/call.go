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

package a2atools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"

	"github.com/agent-sessions/agent-session-operator/internal/mcptools"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
)

// cancelTimeout bounds the cancel sent to a remote task a call gave up on.
const cancelTimeout = 10 * time.Second

// pollEvery is how often a task the remote answered unfinished (no streaming) is asked after.
const pollEvery = 500 * time.Millisecond

// Call sends args' message to the remote agent name and waits for its task to end, within
// the remote's timeout. Every failure is an error Result for the model.
func (s *Set) Call(ctx context.Context, name string, args []byte) mcptools.Result {
	return s.CallCarrying(ctx, name, args, nil)
}

// Target is the URL a call of the remote agent name goes to ("" for an unknown name): what
// the chain extension's pairs name it by.
func (s *Set) Target(name string) string {
	if r, ok := s.remotes[name]; ok {
		return r.card.iface.URL
	}
	return ""
}

// CallCarrying is Call with the chain extension: carry (nil: none) goes in the message's
// metadata under its URI, activated with the A2A-Extensions header, its deadline no later
// than the call's own, and in a W3C baggage header for tracing.
func (s *Set) CallCarrying(ctx context.Context, name string, args []byte, carry *policy.CarriedChain) mcptools.Result {
	r, ok := s.remotes[name]
	if !ok {
		return failed("unknown tool %q", name)
	}
	var a struct {
		Message string `json:"message"`
	}
	if err := json.Unmarshal(args, &a); err != nil || strings.TrimSpace(a.Message) == "" {
		return failed("%s takes {\"message\": \"...\"}, a message to send", name)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, r.timeout, fmt.Errorf("no answer within %s", r.timeout))
	defer cancel()
	t := r.transport()
	defer func() { _ = t.Destroy() }()
	params := &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(a.Message))}
	w := &waiter{sp: r.serviceParams()}
	if carry != nil {
		carry = withDeadline(ctx, carry)
		params.Message.Metadata = map[string]any{policy.ChainExtensionURI: json.RawMessage(carry.Encode())}
		w.sp = carrying(w.sp, carry)
	}
	var err error
	if r.card.Capabilities.Streaming {
		err = w.stream(ctx, t, params)
	} else {
		err = w.send(ctx, t, params)
	}
	// A task the call leaves unfinished (it gave up, or the remote asks for input a tool
	// call cannot give) is cancelled.
	w.cancelRemote(ctx, t)
	if err != nil || !w.ended() {
		switch {
		case ctx.Err() != nil:
			err = context.Cause(ctx)
		case err == nil:
			err = fmt.Errorf("the answer ended with the task %s", w.state)
		}
		return failed("the remote agent %s: %v", r.name, err)
	}
	return w.result(r.name)
}

// transport speaks the version the card's picked interface offers: 1.0, or 0.3 through the
// SDK's compatibility transport.
func (r *remote) transport() a2aclient.Transport {
	if isV1(r.card.iface.ProtocolVersion) {
		return a2aclient.NewJSONRPCTransport(r.card.iface.URL, r.client)
	}
	return a2av0.NewJSONRPCTransport(a2av0.JSONRPCTransportConfig{URL: r.card.iface.URL, Client: r.client})
}

// serviceParams are the A2A-Version a 1.0 call names (a 0.3 call names none).
func (r *remote) serviceParams() a2aclient.ServiceParams {
	if isV1(r.card.iface.ProtocolVersion) {
		return a2aclient.ServiceParams{a2a.SvcParamVersion: {string(a2a.Version)}}
	}
	return nil
}

// waiter follows one task: its id, its last state and the text of its artifacts.
type waiter struct {
	sp        a2aclient.ServiceParams
	id        a2a.TaskID
	state     a2a.TaskState
	status    string
	artifacts []string
	byID      map[a2a.ArtifactID]int
	message   string
}

// stream sends with message/stream and reads the task's events until it ends.
func (w *waiter) stream(ctx context.Context, t a2aclient.Transport, p *a2a.SendMessageRequest) error {
	for ev, err := range t.SendStreamingMessage(ctx, w.sp, p) {
		if err != nil {
			return err
		}
		w.see(ev)
		if w.ended() {
			return nil
		}
	}
	return nil
}

// send sends with message/send (blocking) and asks after a task answered unfinished.
func (w *waiter) send(ctx context.Context, t a2aclient.Transport, p *a2a.SendMessageRequest) error {
	res, err := t.SendMessage(ctx, w.sp, p)
	if err != nil {
		return err
	}
	w.see(res)
	for !w.ended() && w.id != "" {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(pollEvery):
		}
		task, err := t.GetTask(ctx, w.sp, &a2a.GetTaskRequest{ID: w.id})
		if err != nil {
			return err
		}
		w.see(task)
	}
	return nil
}

// see takes in one event of the task.
func (w *waiter) see(ev a2a.Event) {
	switch e := ev.(type) {
	case *a2a.Message:
		w.message, w.state = partsText(e.Parts), a2a.TaskStateCompleted
	case *a2a.Task:
		w.id = e.ID
		w.setStatus(e.Status)
		w.artifacts, w.byID = nil, nil
		for _, art := range e.Artifacts {
			w.addArtifact(art, false)
		}
	case *a2a.TaskStatusUpdateEvent:
		w.id = e.TaskID
		w.setStatus(e.Status)
	case *a2a.TaskArtifactUpdateEvent:
		w.id = e.TaskID
		w.addArtifact(e.Artifact, e.Append)
	}
}

func (w *waiter) setStatus(st a2a.TaskStatus) {
	w.state = st.State
	if st.Message != nil {
		w.status = partsText(st.Message.Parts)
	}
}

// addArtifact adds an artifact's text, or appends it to the artifact of the same id.
func (w *waiter) addArtifact(art *a2a.Artifact, appendTo bool) {
	if art == nil {
		return
	}
	if w.byID == nil {
		w.byID = map[a2a.ArtifactID]int{}
	}
	text := partsText(art.Parts)
	if i, ok := w.byID[art.ID]; ok {
		if appendTo {
			w.artifacts[i] = textutil.Truncate(w.artifacts[i]+text, mcptools.MaxResultBytes)
		} else {
			w.artifacts[i] = textutil.Truncate(text, mcptools.MaxResultBytes)
		}
		return
	}
	w.byID[art.ID] = len(w.artifacts)
	w.artifacts = append(w.artifacts, textutil.Truncate(text, mcptools.MaxResultBytes))
}

// ended says the task is in a state it leaves only with the caller's input, or ended.
func (w *waiter) ended() bool {
	return w.state.Terminal() || w.state == a2a.TaskStateInputRequired || w.state == a2a.TaskStateAuthRequired
}

// result is the ended task as the model reads it: the final artifacts' text when it
// completed, else its state and status message as an error.
func (w *waiter) result(name string) mcptools.Result {
	if w.state == a2a.TaskStateCompleted {
		text := w.message
		if len(w.artifacts) > 0 {
			text = strings.Join(w.artifacts, "\n")
		}
		if text == "" {
			text = w.status
		}
		return mcptools.Result{Text: textutil.Truncate(text, mcptools.MaxResultBytes)}
	}
	msg := w.status
	if msg == "" {
		msg = "no message"
	}
	return failed("the remote agent %s ended the task %s: %s", name, w.state, msg)
}

// cancelRemote cancels the remote task of a call that gave up on it, on a context of its
// own: the call's has ended.
func (w *waiter) cancelRemote(ctx context.Context, t a2aclient.Transport) {
	if w.id == "" || w.state.Terminal() {
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
	defer cancel()
	_, _ = t.CancelTask(cctx, w.sp, &a2a.CancelTaskRequest{ID: w.id})
}

func partsText(parts a2a.ContentParts) string {
	var out []string
	for _, p := range parts {
		switch t := p.Content.(type) {
		case a2a.Text:
			out = append(out, string(t))
		case a2a.Data:
			if b, err := json.Marshal(t.Value); err == nil {
				out = append(out, string(b))
			}
		}
	}
	return strings.Join(out, "")
}

func failed(format string, args ...any) mcptools.Result {
	return mcptools.Result{Text: fmt.Sprintf(format, args...), IsError: true}
}

// withDeadline is carry with a deadline no later than ctx's: an answer after the call gave
// up is wasted work on the other side.
func withDeadline(ctx context.Context, carry *policy.CarriedChain) *policy.CarriedChain {
	d, ok := ctx.Deadline()
	if !ok || (carry.Deadline != nil && carry.Deadline.Before(d)) {
		return carry
	}
	c := *carry
	d = d.UTC().Truncate(time.Second)
	c.Deadline = &d
	return &c
}

// carrying is sp with the chain extension activated (A2A-Extensions) and the chain in W3C
// baggage, which tracing systems keep beside traceparent.
func carrying(sp a2aclient.ServiceParams, carry *policy.CarriedChain) a2aclient.ServiceParams {
	out := a2aclient.ServiceParams{}
	for k, v := range sp {
		out[k] = v
	}
	out[a2a.SvcParamExtensions] = append(out[a2a.SvcParamExtensions], policy.ChainExtensionURI)
	out["baggage"] = []string{policy.ChainBaggage(carry)}
	return out
}
