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

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
	"github.com/agent-sessions/agent-session-operator/internal/tracing"
)

// The spans of a turn, after the OpenTelemetry GenAI semantic conventions: invoke_agent for
// the turn, chat for each model call, execute_tool for each tool call. No message content is
// recorded. With tracing off the tracer is a no-op.

// maxSpanStatus bounds the error a span's status carries: traces are for timing and
// causes, the whole text is in the transcript.
const maxSpanStatus = 256

// noSpan is what the start functions return while tracing is off: no name, attributes or
// context to allocate on every turn, model call and tool call.
var noSpan = trace.SpanFromContext(context.Background())

func startTurnSpan(ctx context.Context, req *TurnRequest) (context.Context, trace.Span) {
	if !tracing.Recording() {
		return ctx, noSpan
	}
	return tracing.Tracer().Start(tracing.WithParent(ctx, req.TraceParent), "invoke_agent",
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(attribute.String("gen_ai.operation.name", "invoke_agent"),
			attribute.String("k8s.namespace.name", req.Namespace), attribute.String("agent_sessions.turn.id", req.ID)))
}

func endTurnSpan(span trace.Span, t *turn) {
	if !span.IsRecording() {
		span.End()
		return
	}
	if t.agent != nil {
		span.SetName("invoke_agent " + t.agent.Name)
		span.SetAttributes(attribute.String("gen_ai.agent.name", t.agent.Name))
	}
	if t.session != nil {
		span.SetAttributes(attribute.String("gen_ai.conversation.id", t.session.Status.SessionID))
	}
	span.SetAttributes(attribute.Int64("gen_ai.usage.input_tokens", t.res.InputTokens),
		attribute.Int64("gen_ai.usage.output_tokens", t.res.OutputTokens))
	if err := t.res.Err; err != nil {
		span.SetStatus(codes.Error, textutil.Truncate(err.Error(), maxSpanStatus))
	}
	span.End()
}

func startChatSpan(ctx context.Context, t *turn) (context.Context, trace.Span) {
	if !tracing.Recording() {
		return ctx, noSpan
	}
	model := t.session.Spec.Model
	if model == "" {
		model = t.agent.Spec.Model.Name
	}
	return tracing.Tracer().Start(ctx, "chat "+model, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("gen_ai.operation.name", "chat"),
			attribute.String("gen_ai.provider.name", t.prov.Name()), attribute.String("gen_ai.request.model", model)))
}

func endChatSpan(span trace.Span, resp *provider.Response, err error) {
	if resp != nil && span.IsRecording() {
		span.SetAttributes(attribute.String("gen_ai.response.model", resp.Model),
			attribute.Int64("gen_ai.usage.input_tokens", resp.Usage.InputTokens),
			attribute.Int64("gen_ai.usage.output_tokens", resp.Usage.OutputTokens))
	}
	if err != nil {
		var perr *provider.Error
		if errors.As(err, &perr) {
			span.SetAttributes(attribute.String("error.type", perr.Type))
		}
		span.SetStatus(codes.Error, textutil.Truncate(err.Error(), maxSpanStatus))
	}
	span.End()
}

func startToolSpan(ctx context.Context, call *provider.ToolCall) (context.Context, trace.Span) {
	if !tracing.Recording() {
		return ctx, noSpan
	}
	return tracing.Tracer().Start(ctx, "execute_tool "+call.Name, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", call.Name), attribute.String("gen_ai.tool.call.id", call.ID)))
}

func endToolSpan(span trace.Span, isErr bool, text string) {
	if isErr {
		span.SetStatus(codes.Error, textutil.Truncate(text, maxSpanStatus))
	}
	span.End()
}
