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

// Package sandboxd is the manager's client of one sandbox's sandboxd (kubernetes-sigs/
// agent-sandbox's runtime daemon): its gRPC ProcessService for exec, its REST filesystem API
// for files, with the module's own generated stubs and wire types. sandboxd binds the Pod's
// loopback only; a Dial function says how to get there (the API server's port-forward in a
// cluster, a plain TCP dial to a local sandboxd in tests). Every answer is bounded before it
// is kept.
package sandboxd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	processv1 "sigs.k8s.io/agent-sandbox/packages/sandboxd/spec/process/v1"
)

// Dial opens a connection to port on the sandbox's loopback.
type Dial func(ctx context.Context, port int) (net.Conn, error)

// Client talks to one sandboxd.
type Client struct {
	conn *grpc.ClientConn
	proc processv1.ProcessServiceClient
	http *http.Client
	rest string
}

// maxListingBytes bounds a directory listing's JSON before it is decoded.
const maxListingBytes = 4 << 20

// New returns a client of the sandboxd reached by dial on its gRPC and REST ports.
func New(dial Dial, grpcPort, restPort int) (*Client, error) {
	conn, err := grpc.NewClient("passthrough:///sandboxd",
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return dial(ctx, grpcPort) }))
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{
		DialContext:         func(ctx context.Context, _, _ string) (net.Conn, error) { return dial(ctx, restPort) },
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     time.Minute,
	}
	return &Client{conn: conn, proc: processv1.NewProcessServiceClient(conn), http: &http.Client{Transport: tr},
		rest: "http://sandboxd"}, nil
}

// Close closes the client's connections.
func (c *Client) Close() error {
	c.http.CloseIdleConnections()
	return c.conn.Close()
}

// ExecResult is what an exec produced, each stream cut at the limit it was run with.
type ExecResult struct {
	Stdout, Stderr string
	ExitCode       int32
	// Truncated says output went past the limit; the process was killed there.
	Truncated bool
	// TimedOut says the process was still running at its timeout and was killed.
	TimedOut bool
}

// Exec runs argv in cwd (relative to the workspace) for at most timeout, keeping at most
// limit bytes of each of stdout and stderr. It streams (Start) rather than Execute so that
// a command that floods its output is killed at the limit instead of filling memory.
func (c *Client) Exec(ctx context.Context, argv []string, cwd string, timeout time.Duration, limit int) (ExecResult, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cfg := &processv1.ProcessConfig{Command: argv}
	if cwd != "" && cwd != "." {
		cfg.Cwd = &cwd
	}
	// WaitForReady: a sandbox that just became Ready may not listen yet; the call waits for
	// the connection within its timeout instead of failing at once.
	stream, err := c.proc.Start(ctx, &processv1.StartRequest{Config: cfg}, grpc.WaitForReady(true))
	if err != nil {
		return ExecResult{}, err
	}
	var res ExecResult
	var out, errb bytes.Buffer
	keep := func(b *bytes.Buffer, p []byte) {
		if room := limit - b.Len(); room < len(p) {
			p, res.Truncated = p[:max(room, 0)], true
		}
		b.Write(p)
	}
	for {
		msg, err := stream.Recv()
		if err != nil {
			res.Stdout, res.Stderr = out.String(), errb.String()
			// The server may see the deadline (sent with the call) before this context does.
			if (ctx.Err() != nil || status.Code(err) == codes.DeadlineExceeded) && !res.Truncated {
				res.TimedOut, res.ExitCode = true, -1
				return res, nil
			}
			if res.Truncated {
				res.ExitCode = -1
				return res, nil
			}
			return res, fmt.Errorf("sandboxd: %w", err)
		}
		switch ev := msg.GetEvent().(type) {
		case *processv1.StartResponse_Stdout:
			keep(&out, ev.Stdout)
		case *processv1.StartResponse_Stderr:
			keep(&errb, ev.Stderr)
		case *processv1.StartResponse_Exit:
			res.Stdout, res.Stderr, res.ExitCode = out.String(), errb.String(), ev.Exit.GetExitCode()
			return res, nil
		}
		if res.Truncated {
			// Ending the stream cancels the process (sandboxd runs it under the stream's context).
			cancel()
		}
	}
}

// Error is sandboxd's answer to a refused file operation.
type Error struct {
	Status  int
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// IsNotFound says err is sandboxd's NOT_FOUND.
func IsNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusNotFound
}

// IsOutside says err is sandboxd refusing a path that resolves outside its root.
func IsOutside(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusForbidden
}

func (c *Client) fileURL(rel string) string {
	if rel == "." {
		rel = ""
	}
	parts := strings.Split(rel, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return c.rest + "/v1/files/" + strings.Join(parts, "/")
}

func (c *Client) do(ctx context.Context, method, rel string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.fileURL(rel), body)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/octet-stream")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("sandboxd: %w", err)
	}
	if resp.StatusCode >= 300 {
		defer resp.Body.Close()
		e := &Error{Status: resp.StatusCode}
		if json.NewDecoder(io.LimitReader(resp.Body, 4<<10)).Decode(e) != nil || e.Code == "" {
			e.Code, e.Message = strconv.Itoa(resp.StatusCode), http.StatusText(resp.StatusCode)
		}
		return nil, e
	}
	return resp, nil
}

// Health asks sandboxd whether it serves (GET /v1/health): nil once it answers 200. A Pod is
// Ready when its container started, which can be before sandboxd listens.
func (c *Client) Health(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.rest+"/v1/health", nil)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("sandboxd: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("sandboxd health: %s", resp.Status)
	}
	return nil
}

// Read returns at most limit bytes of the file at rel, and whether there was more.
func (c *Client) Read(ctx context.Context, rel string, limit int) ([]byte, bool, error) {
	resp, err := c.do(ctx, http.MethodGet, rel, nil)
	if err != nil {
		return nil, false, err
	}
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return nil, false, fmt.Errorf("%s is a directory", rel)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if err != nil {
		return nil, false, fmt.Errorf("sandboxd: %w", err)
	}
	if len(b) > limit {
		return b[:limit], true, nil
	}
	return b, false, nil
}

// Write replaces the file at rel with data, atomically, creating its parents.
func (c *Client) Write(ctx context.Context, rel string, data []byte) error {
	resp, err := c.do(ctx, http.MethodPut, rel, bytes.NewReader(data))
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	return nil
}

// Entry is one directory entry, as sandboxd lists it.
type Entry struct {
	Name       string `json:"name"`
	Size       int64  `json:"size"`
	Type       string `json:"type"`
	ModifiedAt string `json:"modified_at"`
	Mode       string `json:"mode,omitempty"`
}

// List returns at most limit entries of the directory at rel, and whether there were more.
// sandboxd leaves out links that lead outside the workspace.
func (c *Client) List(ctx context.Context, rel string, limit int) ([]Entry, bool, error) {
	resp, err := c.do(ctx, http.MethodGet, rel, nil)
	if err != nil {
		return nil, false, err
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return nil, false, fmt.Errorf("%s is a file", rel)
	}
	lr := &io.LimitedReader{R: resp.Body, N: maxListingBytes}
	var listing struct {
		Entries []Entry `json:"entries"`
	}
	if err := json.NewDecoder(lr).Decode(&listing); err != nil {
		if lr.N <= 0 {
			return nil, false, fmt.Errorf("the listing of %s is larger than %d bytes", rel, maxListingBytes)
		}
		return nil, false, fmt.Errorf("sandboxd: %w", err)
	}
	if len(listing.Entries) > limit {
		return listing.Entries[:limit], true, nil
	}
	return listing.Entries, false, nil
}
