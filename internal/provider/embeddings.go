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

package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"time"

	"k8s.io/utils/clock"

	"github.com/agent-sessions/agent-session-operator/internal/egress"
)

// Bounds of an embeddings call: what one request asks for and what it may answer.
const (
	// MaxEmbedInputs is how many texts one embeddings request carries.
	MaxEmbedInputs = 64
	// MaxEmbedDims bounds a vector's length; longer ones are cut (and renormalized), as
	// the text-embedding-3 models allow.
	MaxEmbedDims = 1536
	// DefaultEmbedDims is the length the index keeps: 256 int8 components a chunk.
	DefaultEmbedDims = 256
	// embedAttemptTimeout bounds one embeddings attempt: an answer comes whole and quickly.
	embedAttemptTimeout = 30 * time.Second
)

// EmbedConfig configures an Embedder. Provider "scripted" (or empty) is the offline
// embedder, for tests and local runs; "openai" is any OpenAI-compatible /v1/embeddings.
type EmbedConfig struct {
	Provider string
	Model    string
	// BaseURL defaults to https://api.openai.com/v1.
	BaseURL string
	APIKey  string
	// Dims is the length of the vectors asked for and kept (0: DefaultEmbedDims).
	Dims int
	// HTTPClient, Egress, MaxRetries and Clock are as Config's.
	HTTPClient *http.Client
	Egress     *egress.Policy
	MaxRetries int
	Clock      clock.WithTicker
}

// Embedder turns texts into unit vectors of one length.
type Embedder interface {
	// Embed returns one vector per text (at most MaxEmbedInputs texts) and the input
	// tokens the provider counted.
	Embed(ctx context.Context, texts []string) ([][]float32, int64, error)
	// Dims is the length of the vectors.
	Dims() int
}

// NewEmbedder builds the embedder cfg names.
func NewEmbedder(cfg EmbedConfig) (Embedder, error) {
	if cfg.Dims <= 0 {
		cfg.Dims = DefaultEmbedDims
	}
	if cfg.Dims > MaxEmbedDims {
		return nil, fmt.Errorf("embeddings: dims %d is more than %d", cfg.Dims, MaxEmbedDims)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	switch cfg.Provider {
	case Scripted, "":
		return Offline{N: cfg.Dims}, nil
	case OpenAI:
	default:
		return nil, fmt.Errorf("embeddings: unknown provider %q (want openai or scripted)", cfg.Provider)
	}
	if cfg.Model == "" {
		return nil, errors.New("embeddings: the openai provider needs a model name")
	}
	h := http.Header{}
	if cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = cfg.Egress.Client(egress.ClientOptions{})
	}
	mc := Config{Provider: OpenAI, Model: cfg.Model, BaseURL: cfg.BaseURL, HTTPClient: cfg.HTTPClient,
		MaxRetries: cfg.MaxRetries, Clock: cfg.Clock, AttemptTimeout: embedAttemptTimeout, IdleTimeout: embedAttemptTimeout}
	return &openAIEmbedder{e: newEndpoint(mc, defaultOpenAIBaseURL, "/embeddings", h), dims: cfg.Dims}, nil
}

type openAIEmbedder struct {
	e    endpoint
	dims int
}

func (p *openAIEmbedder) Dims() int { return p.dims }

type oaiEmbedRequest struct {
	Model      string   `json:"model"`
	Input      []string `json:"input"`
	Dimensions int      `json:"dimensions,omitempty"`
}

type oaiEmbedResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	} `json:"data"`
	Usage struct {
		PromptTokens int64 `json:"prompt_tokens"`
	} `json:"usage"`
}

// Embed posts the texts to /embeddings through the model clients' transport: its retries,
// attempt and idle timeouts, egress policy and MaxResponseBody.
func (p *openAIEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, int64, error) {
	if len(texts) == 0 {
		return nil, 0, nil
	}
	if len(texts) > MaxEmbedInputs {
		return nil, 0, fmt.Errorf("embeddings: %d texts in one call, at most %d", len(texts), MaxEmbedInputs)
	}
	body, err := json.Marshal(oaiEmbedRequest{Model: p.e.cfg.Model, Input: texts, Dimensions: p.dims})
	if err != nil {
		return nil, 0, err
	}
	var out [][]float32
	var tokens int64
	_, err = p.e.t.call(ctx, p.e.url, p.e.header, body, func(r io.Reader) (*Response, error) {
		var w oaiEmbedResponse
		if err := json.NewDecoder(r).Decode(&w); err != nil {
			return nil, &Error{Type: ErrMalformedResponse, Message: "embeddings: " + err.Error(), Err: err}
		}
		vecs, err := embeddingsOf(w, len(texts), p.dims)
		if err != nil {
			return nil, &Error{Type: ErrMalformedResponse, Message: err.Error(), Err: err}
		}
		out, tokens = vecs, w.Usage.PromptTokens
		return &Response{}, nil
	})
	if err != nil {
		return nil, 0, err
	}
	return out, tokens, nil
}

// embeddingsOf puts the answer's vectors in input order, each cut to dims and normalized.
func embeddingsOf(w oaiEmbedResponse, n, dims int) ([][]float32, error) {
	if len(w.Data) != n {
		return nil, fmt.Errorf("embeddings: %d vectors for %d inputs", len(w.Data), n)
	}
	out := make([][]float32, n)
	for _, d := range w.Data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil {
			return nil, fmt.Errorf("embeddings: bad or repeated index %d", d.Index)
		}
		if len(d.Embedding) < dims {
			return nil, fmt.Errorf("embeddings: a vector of %d dimensions, want %d", len(d.Embedding), dims)
		}
		v := make([]float32, dims)
		for i := range v {
			v[i] = float32(d.Embedding[i])
		}
		if !Normalize(v) {
			return nil, errors.New("embeddings: a zero or non-finite vector")
		}
		out[d.Index] = v
	}
	return out, nil
}

// Normalize scales v to unit length; false when it has none (zero, NaN or Inf).
func Normalize(v []float32) bool {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return false
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
	return true
}
