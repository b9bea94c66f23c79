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

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ProviderName selects the model provider.
// +kubebuilder:validation:Enum=openai;anthropic;scripted
type ProviderName string

const (
	ProviderOpenAI    ProviderName = "openai"
	ProviderAnthropic ProviderName = "anthropic"
	ProviderScripted  ProviderName = "scripted"
)

// ToolsVisibility is what session tools of a sandboxed session may see.
// +kubebuilder:validation:Enum=spawned;all
type ToolsVisibility string

const (
	ToolsVisibilitySpawned ToolsVisibility = "spawned"
	ToolsVisibilityAll     ToolsVisibility = "all"
)

// ScriptToolCall is a tool call a scripted rule makes on the turn's first model call.
type ScriptToolCall struct {
	// name is the tool to call, e.g. sessions_spawn.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Name string `json:"name"`
	// arguments are the tool's JSON arguments; string values may use {{input}}.
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Arguments *runtime.RawExtension `json:"arguments,omitempty"`
}

// ScriptRule is one rule of the scripted provider; the first matching rule answers.
type ScriptRule struct {
	// match is an RE2 expression tried against the text of the turn's input message.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Match string `json:"match"`
	// reply is the final text; {{input}} is the input text, {{toolResults}} the tool results.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	Reply string `json:"reply,omitempty"`
	// toolCalls are made on the turn's first model call; their results are fed back.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	ToolCalls []ScriptToolCall `json:"toolCalls,omitempty"`
	// delay waits before answering (model latency, for timeouts and benchmarks), at most 10m.
	// +kubebuilder:validation:XValidation:rule="duration(self) <= duration('10m')",message="delay may be at most 10m"
	// +optional
	Delay *metav1.Duration `json:"delay,omitempty"`
}

// ModelSpec selects and configures the model provider.
// +kubebuilder:validation:XValidation:rule="self.provider == 'scripted' || has(self.name)",message="name is required for the openai and anthropic providers"
// +kubebuilder:validation:XValidation:rule="self.provider != 'anthropic' || has(self.apiKeySecretRef)",message="apiKeySecretRef is required for the anthropic provider (openai-compatible servers such as Ollama or vLLM may go without)"
type ModelSpec struct {
	// provider is openai (any OpenAI-compatible chat completions server: vLLM, Ollama, LiteLLM), anthropic (Messages API) or scripted (deterministic rules, offline).
	// +required
	Provider ProviderName `json:"provider"`
	// name is the model name sent to the provider.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name,omitempty"`
	// baseURL overrides the provider's endpoint, e.g. http://ollama:11434/v1.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://`
	BaseURL string `json:"baseURL,omitempty"`
	// apiKeySecretRef names the Secret key holding the API key, in the Agent's namespace.
	// Required by anthropic; optional for openai (servers such as Ollama or vLLM need no
	// key). The Agent's creator must be allowed to get the Secret, or the Secret must carry
	// the label sessions.agents.dev/agent-usable=true.
	// +optional
	APIKeySecretRef *corev1.SecretKeySelector `json:"apiKeySecretRef,omitempty"`
	// contextTokens is the model's context window used to fit the transcript.
	// +optional
	// +kubebuilder:validation:Minimum=256
	ContextTokens *int64 `json:"contextTokens,omitempty"`
	// pricing prices the model's usage; unset leaves status.usage.cost empty.
	// +optional
	Pricing *Pricing `json:"pricing,omitempty"`
	// script holds the scripted provider's rules, first match wins; no match echoes.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	Script []ScriptRule `json:"script,omitempty"`
}

// SubagentsSpec governs the sub-agents an agent may spawn.
type SubagentsSpec struct {
	// allowAgents lists agent ids this agent may spawn under; "*" allows any. Empty: only itself.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	AllowAgents []string `json:"allowAgents,omitempty"`
	// archiveAfterMinutes archives a kept sub-agent session after this many minutes; default 60.
	// +optional
	// +kubebuilder:default=60
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=525600
	ArchiveAfterMinutes *int32 `json:"archiveAfterMinutes,omitempty"`
	// runTimeoutSeconds is the default run timeout of spawns; 0 means none.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	RunTimeoutSeconds *int32 `json:"runTimeoutSeconds,omitempty"`
	// maxSpawnDepth is how deep spawns may nest; 1 (the default) means sub-agents cannot spawn.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=5
	MaxSpawnDepth *int32 `json:"maxSpawnDepth,omitempty"`
	// maxChildren is how many active children one session may have; default 5.
	// +optional
	// +kubebuilder:default=5
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	MaxChildren *int32 `json:"maxChildren,omitempty"`
	// tools names what this agent's sessions get when they run as sub-agents, e.g. mcp__everything__echo or sessions_history.
	// Empty means every non-session tool (the default: no session tools).
	// Session tools named here are offered too, still under the sub-agent's visibility (clamped when sandboxed), the send policy and admission.
	// sessions_spawn is never offered (a sub-agent does not spawn). workspace_list and workspace_read are always offered.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=128
	Tools []string `json:"tools,omitempty"`
}

// MCPHeader is an HTTP header sent to an MCP server, its value read from a Secret.
type MCPHeader struct {
	// name is the header name, e.g. Authorization.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9!#$%&'*+.^_|~-]+$`
	Name string `json:"name"`
	// valueFrom names the Secret key holding the value, in the Agent's namespace.
	// +required
	ValueFrom MCPHeaderSource `json:"valueFrom"`
}

// MCPHeaderSource is where a header value comes from.
type MCPHeaderSource struct {
	// secretKeyRef selects a key of a Secret in the Agent's namespace.
	// +required
	SecretKeyRef corev1.SecretKeySelector `json:"secretKeyRef"`
}

// MCPServer is a remote MCP tool server whose tools the agent's turns may call.
type MCPServer struct {
	// name is a DNS label; the model sees the server's tools as mcp__<name>__<tool>.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// url is the server's endpoint: streamable HTTP, or the older HTTP+SSE transport.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://`
	URL string `json:"url"`
	// headers are sent with every request to the server.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	Headers []MCPHeader `json:"headers,omitempty"`
	// allowedTools are the server's tool names offered to the model; empty means every tool the server lists.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=128
	AllowedTools []string `json:"allowedTools,omitempty"`
	// timeoutSeconds bounds one tool call, default 30; a call that takes longer ends with an error result, not the turn.
	// Connecting and listing the tools get at least 10 seconds.
	// +optional
	// +kubebuilder:default=30
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=600
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`
}

// ToolsSpec gives the agent tools beyond the session tools.
type ToolsSpec struct {
	// mcpServers are the MCP tool servers the agent's turns may call.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	MCPServers []MCPServer `json:"mcpServers,omitempty"`
	// a2aAgents are remote A2A agents the agent's turns may call; the model sees each as the tool a2a__<name>.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	A2AAgents []A2AAgent `json:"a2aAgents,omitempty"`
	// approval says which tool calls of this agent wait for a person's decision; a SessionPolicy's require wins over an allow here.
	// +optional
	Approval *ApprovalPolicy `json:"approval,omitempty"`
}

// A2AAgent is a remote A2A agent the agent's turns may send a message to and wait for.
type A2AAgent struct {
	// name is a DNS label; the model sees the remote agent as the tool a2a__<name>.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// url is the agent's base URL; its agent card is read from url + /.well-known/agent-card.json.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://`
	URL string `json:"url"`
	// headers are sent with every request to the agent, its card included.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	Headers []MCPHeader `json:"headers,omitempty"`
	// timeoutSeconds bounds one call, from the send to the final answer, default 120; a call that takes longer cancels the remote task and ends with an error result, not the turn.
	// +optional
	// +kubebuilder:default=120
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=600
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`
	// verify makes the manager refuse the agent's card unless it is signed (A2A 1.0 signed agent cards) with a key of the set named here: the Agent is then not Ready, reason CardSignatureInvalid.
	// Only the card's signed fields are used then: a 0.3-only card (no supportedInterfaces) is refused.
	// +optional
	Verify *A2AVerify `json:"verify,omitempty"`
}

// A2AVerify names the JSON Web Key Set an agent card's signature must verify with: one of jwksSecretRef or jwksURL.
// +kubebuilder:validation:XValidation:rule="has(self.jwksSecretRef) != has(self.jwksURL)",message="set exactly one of jwksSecretRef or jwksURL"
type A2AVerify struct {
	// jwksSecretRef selects a key of a Secret in the Agent's namespace holding the JWKS; it must be usable by the Agent as header Secrets are.
	// +optional
	JWKSSecretRef *corev1.SecretKeySelector `json:"jwksSecretRef,omitempty"`
	// jwksURL is where the JWKS is read (e.g. https://host/a2a/.well-known/jwks.json of another agent-session-operator), under the egress allow list.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://`
	JWKSURL string `json:"jwksURL,omitempty"`
}

// SandboxSpec says whether the agent runs sandboxed and what its sandbox is. A sandboxed
// session's tools (exec, read, write, edit, ls) run in a kubernetes-sigs/agent-sandbox
// Sandbox claimed from the SandboxTemplate and SandboxWarmPool the Agent owns.
type SandboxSpec struct {
	// enabled runs this agent's sessions sandboxed.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// sessionToolsVisibility is spawned (the default), which clamps session tools to the sessions this session spawned; all lets the SessionPolicy's visibility apply.
	// +optional
	// +kubebuilder:default=spawned
	SessionToolsVisibility ToolsVisibility `json:"sessionToolsVisibility,omitempty"`
	// image is the sandbox's container image; it must run sandboxd as its entrypoint. Unset uses the manager's --sandbox-image (sandboxd, a shell and coreutils, built from this repository).
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image,omitempty"`
	// runtimeClassName is the RuntimeClass of the sandbox Pod. Unset uses gvisor when that RuntimeClass exists, else the node's default runtime; status.sandbox.runtimeClassName says which.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	RuntimeClassName *string `json:"runtimeClassName,omitempty"`
	// resources are the sandbox container's requests and limits.
	// +optional
	Resources SandboxResources `json:"resources,omitempty,omitzero"`
	// warmPool is how many sandboxes wait ready to be claimed, default 0 (every claim starts one).
	// +optional
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	WarmPool *int32 `json:"warmPool,omitempty"`
	// idleSeconds is how long a session's sandbox runs without a tool call before it is suspended (its Pod removed, its workspace kept), default 300.
	// +optional
	// +kubebuilder:default=300
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=604800
	IdleSeconds *int32 `json:"idleSeconds,omitempty"`
	// egress is where the sandbox may connect besides DNS; empty (the default) allows nothing else.
	// Enforced by the sandbox's NetworkPolicy, so only on a network plugin that enforces NetworkPolicy.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Egress []SandboxEgressRule `json:"egress,omitempty"`
}

// Reasons of an Agent's Ready=False when its sandbox cannot start; the spawn guard refuses a
// sandboxed session's spawn into such an Agent with the same words.
const (
	// ReasonRuntimeClassNotFound: spec.sandbox.runtimeClassName names no RuntimeClass.
	ReasonRuntimeClassNotFound = "RuntimeClassNotFound"
	// ReasonSandboxImageNotSet: neither spec.sandbox.image nor the manager's --sandbox-image is set.
	ReasonSandboxImageNotSet = "SandboxImageNotSet"
	// ReasonSandboxImagePullFailed: a sandbox or warm-pool Pod of the Agent cannot pull the sandbox image.
	ReasonSandboxImagePullFailed = "SandboxImagePullFailed"
)

// SandboxResources are the compute resources of a sandbox's container.
type SandboxResources struct {
	// requests are the resources the scheduler reserves for the sandbox, e.g. cpu: 250m, memory: 256Mi.
	// +optional
	Requests corev1.ResourceList `json:"requests,omitempty"`
	// limits are the most the sandbox may use, e.g. cpu: "1", memory: 1Gi.
	// +optional
	Limits corev1.ResourceList `json:"limits,omitempty"`
}

// SandboxEgressRule allows a sandbox to connect to one network, on some ports.
type SandboxEgressRule struct {
	// cidr is the destination network, e.g. 203.0.113.7/32. A NetworkPolicy selects addresses, not host names.
	// +required
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="isCIDR(self)",message="must be a CIDR such as 203.0.113.7/32"
	CIDR string `json:"cidr"`
	// ports are the TCP ports allowed; empty allows every port.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	Ports []int32 `json:"ports,omitempty"`
}

// AgentSpec configures one agent id; the object's name is the agent id.
type AgentSpec struct {
	// model is the provider and model the agent's turns call.
	// +required
	Model ModelSpec `json:"model"`
	// description says what the agent does, for people and other agents: agents_list shows it and the agent's A2A card carries it.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Description string `json:"description,omitempty"`
	// allowedModels narrows the model overrides a spawn or a session may ask for to the Agent's own model and these; empty accepts any model (the provider refuses what it does not serve).
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	AllowedModels []string `json:"allowedModels,omitempty"`
	// turnTimeoutSeconds bounds one turn of this agent, its model and tool calls included, default 600.
	// A turn still running then ends aborted and its send or run fails.
	// +optional
	// +kubebuilder:default=600
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	TurnTimeoutSeconds *int32 `json:"turnTimeoutSeconds,omitempty"`
	// systemPrompt is sent as the system message of every turn.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	SystemPrompt string `json:"systemPrompt,omitempty"`
	// subagents governs sessions_spawn.
	// +optional
	// +kubebuilder:default={}
	Subagents SubagentsSpec `json:"subagents,omitempty"`
	// sandbox governs sandboxing of this agent's sessions.
	// +optional
	// +kubebuilder:default={}
	Sandbox SandboxSpec `json:"sandbox,omitempty"`
	// tools gives the agent's turns tools beyond the session tools.
	// +optional
	Tools ToolsSpec `json:"tools,omitempty"`
	// memory governs how the agent's sessions keep older history once it outgrows the context window.
	// +optional
	// +kubebuilder:default={}
	Memory MemorySpec `json:"memory,omitempty"`
}

// MemorySpec governs the memory of an agent's long sessions, and its long-term memory across them.
// +kubebuilder:validation:XValidation:rule="!has(self.enabled) || !self.enabled || has(self.embeddings)",message="memory.enabled needs memory.embeddings"
type MemorySpec struct {
	// compaction folds older history into a summary the model keeps, instead of dropping it.
	// +optional
	// +kubebuilder:default={}
	Compaction CompactionSpec `json:"compaction,omitempty"`
	// enabled gives the agent's sessions memory_search, memory_get and memory_write: recall, by meaning and by words, of chunks of its own sessions (up to 1024 bytes each, 5000 a session), their compaction summaries and its notes, within what each session may see.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// embeddings is the provider that turns chunks and queries into vectors; required when enabled.
	// +optional
	Embeddings *EmbeddingsSpec `json:"embeddings,omitempty"`
	// toolResults remembers tool results too, not only what users and the agent said.
	// +optional
	ToolResults bool `json:"toolResults,omitempty"`
}

// EmbeddingsProvider is an embeddings provider.
// +kubebuilder:validation:Enum=openai;scripted
type EmbeddingsProvider string

const (
	// EmbeddingsOpenAI is any OpenAI-compatible /v1/embeddings endpoint.
	EmbeddingsOpenAI EmbeddingsProvider = "openai"
	// EmbeddingsScripted is the offline embedder, for tests and local runs: hashed word stems and character
	// trigrams, no synonyms, no network.
	EmbeddingsScripted EmbeddingsProvider = "scripted"
)

// EmbeddingsSpec names an embeddings provider. Its calls are bounded like the model clients' (retries with backoff,
// a 30 s attempt timeout, a 4 MiB answer), share the namespace's rate of 600 calls a minute, and a query's call is
// judged and charged to the budgets like a model call.
// +kubebuilder:validation:XValidation:rule="self.provider != 'openai' || (has(self.name) && size(self.name) > 0)",message="the openai provider needs a name"
type EmbeddingsSpec struct {
	// provider is openai (any OpenAI-compatible /v1/embeddings) or scripted (offline, for tests).
	// +required
	Provider EmbeddingsProvider `json:"provider"`
	// name is the embeddings model, e.g. text-embedding-3-small.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name,omitempty"`
	// baseURL overrides the provider's endpoint, e.g. http://ollama:11434/v1.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://`
	BaseURL string `json:"baseURL,omitempty"`
	// secretRef selects the API key in a Secret of the agent's namespace.
	// +optional
	SecretRef *corev1.SecretKeySelector `json:"secretRef,omitempty"`
	// dimensions is the length of the vectors asked for and kept, default 256; longer ones are cut (as the text-embedding-3 models allow).
	// +optional
	// +kubebuilder:default=256
	// +kubebuilder:validation:Minimum=8
	// +kubebuilder:validation:Maximum=1536
	Dimensions *int32 `json:"dimensions,omitempty"`
}

// CompactionSpec configures the compaction step: before a turn whose history would pass
// triggerRatio of model.contextTokens, one model call (whose user message starts with
// "Compaction step.") folds the previous summary and older messages into a new summary,
// recorded in the transcript as a compaction record.
type CompactionSpec struct {
	// enabled turns compaction on, default true; off, a turn keeps the newest messages that fit and drops the rest.
	// +optional
	// +kubebuilder:default=true
	Enabled *bool `json:"enabled,omitempty"`
	// triggerRatio is the share of contextTokens that history and input may use before a turn compacts, default 0.8.
	// +optional
	// +kubebuilder:default=0.8
	// +kubebuilder:validation:Minimum=0.1
	// +kubebuilder:validation:Maximum=1
	TriggerRatio *float64 `json:"triggerRatio,omitempty"`
	// keepRecentMessages are the newest messages that always stay verbatim, default 20.
	// +optional
	// +kubebuilder:default=20
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	KeepRecentMessages *int32 `json:"keepRecentMessages,omitempty"`
	// model is the model of the summary call (a cheaper one of the same provider); unset uses the session's model.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Model string `json:"model,omitempty"`
	// timeoutSeconds bounds the compaction step, default 120; a step that takes longer is abandoned and the turn goes on with truncated history.
	// +optional
	// +kubebuilder:default=120
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=3600
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`
	// instructions are extra text for the summariser, e.g. what to keep.
	// +optional
	// +kubebuilder:validation:MaxLength=8192
	Instructions string `json:"instructions,omitempty"`
}

// MCPServerStatus is what the last check of one MCP server found.
type MCPServerStatus struct {
	// name is the server's name in spec.tools.mcpServers.
	// +required
	Name string `json:"name"`
	// connected says the server answered initialize.
	// +required
	Connected bool `json:"connected"`
	// tools is how many tools the server offers the agent (after allowedTools).
	// +optional
	Tools int32 `json:"tools,omitempty"`
	// reason is why the server is not connected, in one word: EgressRefused (the operator's egress allow list refuses its URL), SecretNotUsable (a header Secret the Agent may not use, or one that is missing), InvalidURL, or Unreachable.
	// The first three make the Agent not Ready.
	// +optional
	Reason string `json:"reason,omitempty"`
	// message says why the server is not connected.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message,omitempty"`
}

// AgentStatus reports whether the agent can run turns.
type AgentStatus struct {
	// conditions are Ready (the provider is configured and its API key Secret exists), and
	// Stalled with the same reason while it is not.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// observedGeneration is the generation the status reflects.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// mcpServers reports, per configured MCP server, whether it answered initialize and how many tools it offers.
	// +optional
	// +listType=map
	// +listMapKey=name
	MCPServers []MCPServerStatus `json:"mcpServers,omitempty"`
	// a2aAgents reports, per configured remote A2A agent, whether its agent card was read.
	// +optional
	// +listType=map
	// +listMapKey=name
	A2AAgents []A2AAgentStatus `json:"a2aAgents,omitempty"`
	// sandbox reports the agent-sandbox objects of a sandboxed agent and the runtime its sandboxes get.
	// +optional
	Sandbox *AgentSandboxStatus `json:"sandbox,omitempty"`
}

// AgentSandboxStatus names the SandboxTemplate and SandboxWarmPool the Agent owns.
type AgentSandboxStatus struct {
	// template is the SandboxTemplate's name.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Template string `json:"template,omitempty"`
	// warmPool is the SandboxWarmPool's name; sessions claim from it.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	WarmPool string `json:"warmPool,omitempty"`
	// runtimeClassName is the RuntimeClass the sandbox Pods run with; empty is the node's default runtime.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	RuntimeClassName string `json:"runtimeClassName,omitempty"`
	// readyReplicas is how many warm sandboxes wait to be claimed.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
}

// A2AAgentStatus is what the last read of one remote A2A agent's card found.
type A2AAgentStatus struct {
	// name is the agent's name in spec.tools.a2aAgents.
	// +required
	Name string `json:"name"`
	// cardRead says the agent card was read and is usable.
	// +required
	CardRead bool `json:"cardRead"`
	// agentName is the name the card gives.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	AgentName string `json:"agentName,omitempty"`
	// streaming says the card offers streaming, which calls then use.
	// +optional
	Streaming bool `json:"streaming,omitempty"`
	// protocolVersion is the A2A version calls speak: 1.0 when the card offers it over JSON-RPC, else 0.3.
	// +optional
	// +kubebuilder:validation:MaxLength=16
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// signatureVerified says the card's signature verified with spec.tools.a2aAgents[].verify's keys.
	// +optional
	SignatureVerified bool `json:"signatureVerified,omitempty"`
	// reason is why the card was not read, in one word, as for MCP servers: EgressRefused, SecretNotUsable, InvalidURL, OriginRefused, CardSignatureInvalid, or Unreachable.
	// All but Unreachable make the Agent not Ready.
	// +optional
	Reason string `json:"reason,omitempty"`
	// message says why the card was not read.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=agent-sessions
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z0-9][a-z0-9_-]{0,63}$')",message="metadata.name is the agent id and must match [a-z0-9][a-z0-9_-]{0,63}"
// +kubebuilder:printcolumn:name="Provider",type=string,JSONPath=`.spec.model.provider`
// +kubebuilder:printcolumn:name="Model",type=string,JSONPath=`.spec.model.name`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="MCP",type=string,JSONPath=`.status.mcpServers[*].name`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// Agent configures an agent id: its model provider, prompt and spawn limits.
type Agent struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the object's standard metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the agent.
	// +required
	Spec AgentSpec `json:"spec"`
	// status is written by the operator; its observedGeneration reads 0 until the operator has seen the object, so GitOps tools (kstatus, Argo CD) do not take a new object for reconciled.
	// +optional
	// +kubebuilder:default={observedGeneration: 0}
	Status AgentStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// AgentList is a list of Agents.
type AgentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Agent `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Agent{}, &AgentList{})
}
