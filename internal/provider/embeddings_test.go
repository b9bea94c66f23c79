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
	"math"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// embeddingsServer is a real HTTP server answering /v1/embeddings with vectors of dims
// dimensions (the input's index on axis 0, 1 on axis 1), after failing the first fails
// requests with 503; it records the requests.
func embeddingsServer(t *testing.T, dims, fails int) (*httptest.Server, *[]oaiEmbedRequest, *atomic.Int32) {
	t.Helper()
	var reqs []oaiEmbedRequest
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/embeddings" || r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, "no", http.StatusNotFound)
			return
		}
		if int(calls.Add(1)) <= fails {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		var q oaiEmbedRequest
		if err := json.NewDecoder(r.Body).Decode(&q); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		reqs = append(reqs, q)
		var out oaiEmbedResponse
		for i := range q.Input {
			v := make([]float64, dims)
			v[0], v[1] = float64(i), 1
			out.Data = append(out.Data, struct {
				Index     int       `json:"index"`
				Embedding []float64 `json:"embedding"`
			}{Index: len(q.Input) - 1 - i, Embedding: v}) // answered out of order
		}
		out.Usage.PromptTokens = int64(3 * len(q.Input))
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return srv, &reqs, &calls
}

func TestOpenAIEmbedder(t *testing.T) {
	srv, reqs, calls := embeddingsServer(t, 8, 1)
	e, err := NewEmbedder(EmbedConfig{Provider: OpenAI, Model: "text-embedding-3-small", BaseURL: srv.URL + "/v1", APIKey: "k",
		Dims: 4, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	vecs, tokens, err := e.Embed(context.Background(), []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	// Placed by each answer's index (the server sent them reversed), cut to 4 dimensions,
	// normalized.
	s := float32(1 / math.Sqrt2)
	if diff := cmp.Diff([][]float32{{s, s, 0, 0}, {0, 1, 0, 0}}, vecs); diff != "" {
		t.Errorf("vectors (-want +got):\n%s", diff)
	}
	if tokens != 6 || calls.Load() != 2 {
		t.Errorf("tokens %d, calls %d; want 6 tokens, one retry of the 503", tokens, calls.Load())
	}
	if diff := cmp.Diff([]oaiEmbedRequest{{Model: "text-embedding-3-small", Input: []string{"a", "b"}, Dimensions: 4}}, *reqs); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
}

func TestOpenAIEmbedderRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		dims  int
		texts int
	}{
		"vectors shorter than asked": {dims: 2, texts: 1},
		"more texts than one call":   {dims: 8, texts: MaxEmbedInputs + 1},
	} {
		t.Run(name, func(t *testing.T) {
			srv, _, _ := embeddingsServer(t, tc.dims, 0)
			e, err := NewEmbedder(EmbedConfig{Provider: OpenAI, Model: "m", BaseURL: srv.URL + "/v1", APIKey: "k", Dims: 4,
				HTTPClient: srv.Client(), MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := e.Embed(context.Background(), make([]string, tc.texts)); err == nil {
				t.Error("no error")
			}
		})
	}
}

// TestEmbedderEgress: without a client of its own, the embedder dials under the default
// egress policy, which refuses loopback.
func TestEmbedderEgress(t *testing.T) {
	srv, _, calls := embeddingsServer(t, 8, 0)
	e, err := NewEmbedder(EmbedConfig{Provider: OpenAI, Model: "m", BaseURL: srv.URL + "/v1", APIKey: "k", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = e.Embed(context.Background(), []string{"a"})
	var perr *Error
	if !errors.As(err, &perr) || perr.Type != ErrEgress || calls.Load() != 0 {
		t.Errorf("err %v, calls %d; want an egress refusal before any request", err, calls.Load())
	}
}

func TestNewEmbedderConfig(t *testing.T) {
	for name, cfg := range map[string]EmbedConfig{
		"unknown provider":      {Provider: "anthropic"},
		"openai without a name": {Provider: OpenAI},
		"too many dimensions":   {Provider: Scripted, Dims: MaxEmbedDims + 1},
	} {
		if _, err := NewEmbedder(cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestOfflineEmbedder: deterministic, unit length, word forms meet, synonyms do not.
func TestOfflineEmbedder(t *testing.T) {
	e := Offline{N: DefaultEmbedDims}
	cos := func(a, b string) float64 {
		v, _, _ := e.Embed(context.Background(), []string{a, b})
		var s float64
		for i := range v[0] {
			s += float64(v[0][i] * v[1][i])
		}
		return s
	}
	if c := cos("the deploy password rotates on Fridays", "the deploy password rotates on Fridays"); math.Abs(c-1) > 1e-5 {
		t.Errorf("a text with itself: %f", c)
	}
	if c := cos("deploys rotated", "deploy rotating"); c < 0.9 {
		t.Errorf("word forms: %f, want >= 0.9", c)
	}
	near := cos("the deploy password rotates on Fridays", "when does the deploy secret change?")
	far := cos("lunch orders close at noon", "when does the deploy secret change?")
	if near <= far || near < 0.2 {
		t.Errorf("shared stem %f, nothing shared %f", near, far)
	}
	if c := cos("password", "secret"); c > 0.2 {
		t.Errorf("password and secret: %f; the offline embedder knows no synonyms", c)
	}
	if diff := cmp.Diff(map[string]string{"rotates": "rotat", "change": "chang", "fridays": "friday", "stories": "story"},
		map[string]string{"rotates": Stem("rotates"), "change": Stem("change"), "fridays": Stem("fridays"), "stories": Stem("stories")}); diff != "" {
		t.Errorf("Stem (-want +got):\n%s", diff)
	}
}
