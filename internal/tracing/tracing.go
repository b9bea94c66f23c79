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

// Package tracing gives each SessionSend and SubagentRun one OpenTelemetry trace, across
// reconciles and manager restarts: the trace and root span ids are chosen once and kept in an
// annotation on the object (W3C traceparent), every turn of the object is a child of that
// root, and the root span itself is exported when the object finishes, with the ids chosen
// at the start and the object's whole lifetime as its duration. Spans follow the GenAI
// semantic conventions (invoke_agent, chat, execute_tool). Off unless the standard OTEL_*
// environment names an exporter endpoint; message contents are never recorded.
package tracing

import (
	"context"
	"os"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Annotations on SessionSend and SubagentRun.
const (
	// Annotation holds the object's trace: the traceparent of its root span.
	Annotation = "sessions.agents.dev/traceparent"
	// LinkAnnotation holds the traceparent of the tool call span that created the object.
	LinkAnnotation = "sessions.agents.dev/trace-link"
	// ParentAnnotation holds the traceparent of the caller's span the object's root span is
	// a child of (an MCP client's _meta traceparent): the object's trace is the caller's.
	ParentAnnotation = "sessions.agents.dev/trace-parent"
)

// Enabled says an exporter endpoint is configured (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), so Setup will export.
func Enabled() bool {
	return os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
}

// Setup installs the global tracer provider exporting over OTLP/HTTP as the OTEL_*
// environment configures it, when Enabled; otherwise it changes nothing (the global provider
// stays a no-op) and returns a no-op shutdown.
func Setup(ctx context.Context) (func(context.Context) error, error) {
	if !Enabled() {
		return func(context.Context) error { return nil }, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, err
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attribute.String("service.name", "agent-session-operator")))
	if err != nil {
		return nil, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res), sdktrace.WithIDGenerator(chosenIDs{}))
	previous := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	installed.Store(true)
	// Shutdown flushes the spans and puts the previous provider back.
	return func(ctx context.Context) error {
		installed.Store(false)
		err := tp.Shutdown(ctx)
		otel.SetTracerProvider(previous)
		return err
	}, nil
}

// installed is set while Setup's provider is the global one.
var installed atomic.Bool

// Recording says whether spans started now are recorded and exported (Setup installed a
// provider). Hot paths skip building a span's name and attributes when they are not: the
// no-op tracer would allocate them and drop them.
func Recording() bool { return installed.Load() }

// Tracer is the operator's tracer (a no-op until Setup installs a provider).
func Tracer() trace.Tracer { return otel.Tracer("github.com/agent-sessions/agent-session-operator") }

var propagator = propagation.TraceContext{}

// Format is the traceparent of the span context sc ("" when invalid).
func Format(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	propagator.Inject(trace.ContextWithSpanContext(context.Background(), sc), c)
	return c["traceparent"]
}

// Parse reads a traceparent (an invalid span context when it does not parse).
func Parse(traceparent string) trace.SpanContext {
	if traceparent == "" {
		return trace.SpanContext{}
	}
	ctx := propagator.Extract(context.Background(), propagation.MapCarrier{"traceparent": traceparent})
	return trace.SpanContextFromContext(ctx)
}

// WithParent returns ctx carrying the span named by traceparent as the remote parent of the
// spans started under it (ctx itself when it does not parse).
func WithParent(ctx context.Context, traceparent string) context.Context {
	sc := Parse(traceparent)
	if !sc.IsValid() {
		return ctx
	}
	return trace.ContextWithRemoteSpanContext(ctx, sc)
}

// Flush exports the spans that have ended and are still batched.
func Flush(ctx context.Context) error {
	if tp, ok := otel.GetTracerProvider().(*sdktrace.TracerProvider); ok {
		return tp.ForceFlush(ctx)
	}
	return nil
}
