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

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/coder/websocket"
)

// rpcClient is a WebSocket connection to OpenClaw's gateway as a backend operator client on
// loopback: the connect.challenge event, then connect with the token, then requests.
type rpcClient struct {
	conn *websocket.Conn
	next int
}

type frame struct {
	Type    string          `json:"type"`
	ID      string          `json:"id,omitempty"`
	Event   string          `json:"event,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  any             `json:"params,omitempty"`
	OK      bool            `json:"ok,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

func dialGateway(ctx context.Context, g *gateway) (*rpcClient, error) {
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(g.URL, "http"), nil)
	if err != nil {
		return nil, err
	}
	conn.SetReadLimit(64 << 20)
	c := &rpcClient{conn: conn}
	for {
		f, err := c.read(ctx)
		if err != nil {
			_ = conn.CloseNow()
			return nil, err
		}
		if f.Type == "event" && f.Event == "connect.challenge" {
			break
		}
	}
	_, err = c.call(ctx, "connect", map[string]any{
		"minProtocol": 4, "maxProtocol": 4,
		"client": map[string]any{"id": "gateway-client", "version": "1.0.0", "platform": "linux", "mode": "backend"},
		"role":   "operator", "scopes": []string{"operator.read", "operator.write", "operator.admin"},
		"caps": []string{}, "commands": []string{}, "permissions": map[string]any{},
		"auth": map[string]any{"token": g.Token},
	})
	if err != nil {
		_ = conn.CloseNow()
		return nil, fmt.Errorf("connect: %w", err)
	}
	return c, nil
}

func (c *rpcClient) read(ctx context.Context) (frame, error) {
	_, data, err := c.conn.Read(ctx)
	if err != nil {
		return frame{}, err
	}
	var f frame
	return f, json.Unmarshal(data, &f)
}

// call sends one request and returns its response's payload; events in between are skipped.
func (c *rpcClient) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	c.next++
	id := strconv.Itoa(c.next)
	data, err := json.Marshal(frame{Type: "req", ID: id, Method: method, Params: params})
	if err != nil {
		return nil, err
	}
	if err := c.conn.Write(ctx, websocket.MessageText, data); err != nil {
		return nil, err
	}
	for {
		f, err := c.read(ctx)
		if err != nil {
			return nil, err
		}
		if f.Type != "res" || f.ID != id {
			continue
		}
		if !f.OK {
			return nil, fmt.Errorf("%s: %s", method, f.Error)
		}
		return f.Payload, nil
	}
}

func (c *rpcClient) close() { _ = c.conn.Close(websocket.StatusNormalClosure, "") }
