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

package tracing

import (
	"context"
	crand "crypto/rand"
	"crypto/sha256"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// NewRoot chooses the ids of an object's root span (a new trace) and returns its traceparent,
// to be kept in the object's Annotation. The span itself is exported by EndRoot.
func NewRoot() string {
	var tid trace.TraceID
	var sid trace.SpanID
	_, _ = crand.Read(tid[:])
	_, _ = crand.Read(sid[:])
	return Format(trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}))
}

// RootOf is the traceparent of an object's root span derived from its UID: the same on
// every call, so a controller that writes it again from a stale read of the object (the
// annotation not yet in its cache) writes the same trace and does not split the object's
// spans over two traces.
func RootOf(uid string) string {
	sum := sha256.Sum256([]byte("agent-sessions/trace\x00" + uid))
	var tid trace.TraceID
	var sid trace.SpanID
	copy(tid[:], sum[:16])
	copy(sid[:], sum[16:24])
	return Format(trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}))
}

// NewChild chooses the ids of an object's root span as a child of the caller's span parent
// (a traceparent): the caller's trace, a new span id. It returns the traceparent to keep in
// the object's Annotation, "" when parent does not parse.
func NewChild(parent string) string {
	p := Parse(parent)
	if !p.IsValid() {
		return ""
	}
	var sid trace.SpanID
	_, _ = crand.Read(sid[:])
	return Format(trace.NewSpanContext(trace.SpanContextConfig{TraceID: p.TraceID(), SpanID: sid, TraceFlags: p.TraceFlags() | trace.FlagsSampled}))
}

// Root describes an object's root span.
type Root struct {
	// TraceParent is the object's Annotation; Link its LinkAnnotation and Parent its
	// ParentAnnotation (either may be empty).
	TraceParent, Link, Parent string
	// Name is e.g. "sessions_send agent:bob:main".
	Name       string
	Start, End time.Time
	Attributes []attribute.KeyValue
	// Err marks the span failed.
	Err string
}

// EndRoot exports an object's root span with the ids its annotation chose, so the turns
// recorded as its children (before or after a restart) hang under it.
func EndRoot(r Root) {
	sc := Parse(r.TraceParent)
	if !sc.IsValid() {
		return
	}
	ctx := context.WithValue(context.Background(), chosenKey{}, sc)
	opts := []trace.SpanStartOption{trace.WithTimestamp(r.Start), trace.WithAttributes(r.Attributes...),
		trace.WithSpanKind(trace.SpanKindInternal)}
	if p := Parse(r.Parent); p.IsValid() && p.TraceID() == sc.TraceID() {
		// A child of the caller's span, in the caller's trace.
		ctx = trace.ContextWithRemoteSpanContext(ctx, p)
	} else {
		opts = append(opts, trace.WithNewRoot())
	}
	if l := Parse(r.Link); l.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: l}))
	}
	_, span := Tracer().Start(ctx, r.Name, opts...)
	if r.Err != "" {
		span.SetStatus(codes.Error, r.Err)
	}
	span.End(trace.WithTimestamp(r.End))
}

// chosenKey carries the span context whose ids the next root span must take.
type chosenKey struct{}

// chosenIDs is the provider's id generator: random ids, except for a root span started by
// EndRoot, which takes the ids chosen by NewRoot.
type chosenIDs struct{}

func (chosenIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if sc, ok := ctx.Value(chosenKey{}).(trace.SpanContext); ok {
		return sc.TraceID(), sc.SpanID()
	}
	var tid trace.TraceID
	var sid trace.SpanID
	_, _ = crand.Read(tid[:])
	_, _ = crand.Read(sid[:])
	return tid, sid
}

func (chosenIDs) NewSpanID(ctx context.Context, tid trace.TraceID) trace.SpanID {
	if sc, ok := ctx.Value(chosenKey{}).(trace.SpanContext); ok && sc.TraceID() == tid {
		return sc.SpanID()
	}
	var sid trace.SpanID
	_, _ = crand.Read(sid[:])
	return sid
}
