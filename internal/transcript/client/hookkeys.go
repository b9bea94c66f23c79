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

package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// PutHookKeys hands the store the keys of the SessionHooks it serves (set or dropped).
func (c *Client) PutHookKeys(ctx context.Context, keys transcript.HookKeys) error {
	return c.do(ctx, http.MethodPut, transcript.APIHookKeysPath, keys, nil)
}

// HookDeliveries is the deliveries of hook namespace/name the store accepted that its status
// does not count yet.
func (c *Client) HookDeliveries(ctx context.Context, namespace, name string) (transcript.HookDelivery, error) {
	var d transcript.HookDelivery
	q := url.Values{"namespace": {namespace}, "name": {name}}
	err := c.do(ctx, http.MethodGet, transcript.APIHookDeliveriesPath+"?"+q.Encode(), nil, &d)
	return d, err
}

// AckHookDeliveries tells the store d.Count of the hook's deliveries are in its status now.
func (c *Client) AckHookDeliveries(ctx context.Context, d transcript.HookDelivery) error {
	return c.do(ctx, http.MethodPost, transcript.APIHookDeliveriesPath, d, nil)
}
