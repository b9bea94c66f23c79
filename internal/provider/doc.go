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

// Package provider calls language models for agent turns. A Provider takes
// the conversation so far and returns the model's next message: text, tool
// calls, usage. New builds one of three from a Config:
//
//   - "openai": OpenAI-compatible Chat Completions (OpenAI, vLLM, Ollama,
//     LiteLLM), plain JSON or SSE streaming.
//   - "anthropic": the Anthropic Messages API, plain JSON or SSE streaming.
//   - "scripted": deterministic answers from rules, offline; the default for
//     demos, benchmarks and tests.
//
// The HTTP providers retry rate limits (honouring Retry-After), server
// errors and broken connections with exponential backoff and full jitter,
// never waiting past the ctx deadline. What they cannot recover from comes
// back as an *Error whose Type says what went wrong.
//
// # Scripted rules
//
// The scripted provider reads Config.Script, the rules of
// Agent.spec.model.script. The turn's input is the text of the last user
// message in Request.Messages. The first rule whose Match (an RE2 regular
// expression, unanchored; empty matches anything) matches the input answers:
//
//   - ToolCalls: if the rule has tool calls and no tool result follows the
//     input message (the turn's first model call), the provider returns those
//     calls with IDs "call_<n>", n counting every tool call in the
//     conversation, so IDs are deterministic and unique within it. In the
//     string values of Arguments, "{{input}}" becomes the input text.
//   - Reply: otherwise the answer is Reply, with "{{input}}" replaced by the
//     input text and "{{toolResults}}" by the texts of the tool results after
//     the input message, joined by "\n".
//   - Delay: the provider waits this long (on Config.Clock) before answering,
//     to play a slow model; a done ctx ends the wait with the ctx's error.
//
// When no rule matches, the reply is "echo: {{input}}". Usage counts a token
// per 4 bytes, rounded up: input is the system prompt, every message text and
// every tool call's arguments; output is the reply, or the arguments of the
// calls made. StopReason is "stop" or "tool_calls".
//
// In YAML:
//
//	script:
//	- match: "^ping"
//	  reply: "pong"
//	- match: "(?i)research (.*)"
//	  toolCalls:
//	  - name: sessions_spawn
//	    arguments: {task: "look up {{input}}", agentId: research}
//	  reply: "spawned: {{toolResults}}"
//	- match: "slow"
//	  delay: 5s
//	  reply: "done"
package provider
