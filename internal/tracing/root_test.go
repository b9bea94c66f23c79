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
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// An object's root span made for a caller's span (NewChild) is exported with the ids its
// annotation chose, in the caller's trace, as a child of the caller's span; one without a
// parent starts a trace of its own.
func TestRootUnderTheCallersSpan(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithIDGenerator(chosenIDs{}))
	previous := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(previous) })

	caller := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	child := NewChild(caller)
	if NewChild("not a traceparent") != "" {
		t.Error("NewChild of a bad traceparent made a span")
	}
	lone := NewRoot()
	now := time.Now()
	EndRoot(Root{TraceParent: child, Parent: caller, Name: "sessions_send", Start: now, End: now})
	EndRoot(Root{TraceParent: lone, Name: "sessions_send", Start: now, End: now})
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := exp.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("%d spans exported, want 2", len(spans))
	}
	c, p := Parse(child), Parse(caller)
	got := spans[0]
	if got.SpanContext.TraceID() != p.TraceID() || got.SpanContext.SpanID() != c.SpanID() || got.Parent.SpanID() != p.SpanID() {
		t.Errorf("root span %s/%s under %s; want %s/%s under the caller's %s", got.SpanContext.TraceID(), got.SpanContext.SpanID(),
			got.Parent.SpanID(), p.TraceID(), c.SpanID(), p.SpanID())
	}
	l := Parse(lone)
	if own := spans[1]; own.SpanContext.TraceID() != l.TraceID() || own.SpanContext.SpanID() != l.SpanID() || own.Parent.IsValid() {
		t.Errorf("a root without a caller: %s/%s under %v; want %s/%s, no parent", own.SpanContext.TraceID(), own.SpanContext.SpanID(),
			own.Parent.SpanID(), l.TraceID(), l.SpanID())
	}
}

// An object's root from its UID is the same on every call (a second write from a stale read
// keeps the trace), valid and sampled, and differs between objects.
func TestRootOfUID(t *testing.T) {
	a, b := RootOf("0d6f7a52-uid-a"), RootOf("0d6f7a52-uid-b")
	if again := RootOf("0d6f7a52-uid-a"); again != a {
		t.Errorf("RootOf twice: %q then %q", a, again)
	}
	if a == b {
		t.Errorf("two objects share the root %q", a)
	}
	sc := Parse(a)
	if !sc.IsValid() || !sc.IsSampled() {
		t.Errorf("RootOf = %q: valid %v, sampled %v", a, sc.IsValid(), sc.IsSampled())
	}
}
