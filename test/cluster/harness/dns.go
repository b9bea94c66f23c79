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

package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"

	"golang.org/x/net/dns/dnsmessage"
)

// clusterDomain is the kubelet's; Pods search <ns>.svc.<domain>, svc.<domain> and <domain>.
const clusterDomain = "svc.cluster.local."

// startDNS is the node's cluster DNS, the part of CoreDNS the operator needs: an A record
// for <service>.<namespace>.svc.cluster.local (the Service's ClusterIP, read from the API
// server per query), NXDOMAIN for any other name. The kubelet names it in every Pod's
// resolv.conf (clusterDNS), so a sharded install's fronts reach each other's Services by name
// as in a real cluster. It serves until the inner run exits.
func (c *Cluster) startDNS(context.Context) error {
	conn, err := net.ListenPacket("udp", net.JoinHostPort(NodeIP, "53"))
	if err != nil {
		return err
	}
	client, err := c.adminHTTP()
	if err != nil {
		return err
	}
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := conn.ReadFrom(buf)
			if err != nil {
				return
			}
			if out, err := c.answer(client, buf[:n]); err == nil {
				_, _ = conn.WriteTo(out, from)
			}
		}
	}()
	return nil
}

// answer builds the reply to one query.
func (c *Cluster) answer(client *http.Client, query []byte) ([]byte, error) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil, err
	}
	q, err := p.Question()
	if err != nil {
		return nil, err
	}
	reply := dnsmessage.Message{
		Header:    dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired, RecursionAvailable: true, RCode: dnsmessage.RCodeNameError},
		Questions: []dnsmessage.Question{q},
	}
	if ip := c.serviceIP(client, q.Name.String()); ip != nil {
		reply.RCode = dnsmessage.RCodeSuccess
		if q.Type == dnsmessage.TypeA {
			reply.Answers = []dnsmessage.Resource{{
				Header: dnsmessage.ResourceHeader{Name: q.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: 5},
				Body:   &dnsmessage.AResource{A: [4]byte(ip.To4())},
			}}
		}
	}
	return reply.Pack()
}

// serviceIP is the ClusterIP of the Service name names, nil when it names none.
func (c *Cluster) serviceIP(client *http.Client, name string) net.IP {
	rest, ok := strings.CutSuffix(strings.ToLower(name), "."+clusterDomain)
	if !ok {
		return nil
	}
	svc, ns, ok := strings.Cut(rest, ".")
	if !ok || strings.Contains(ns, ".") {
		return nil
	}
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("https://%s:6443/api/v1/namespaces/%s/services/%s", NodeIP, ns, svc), nil)
	if err != nil {
		return nil
	}
	req.Header.Set("Authorization", "Bearer "+c.token("admin"))
	resp, err := client.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var s struct {
		Spec struct {
			ClusterIP string `json:"clusterIP"`
		} `json:"spec"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&s) != nil {
		return nil
	}
	return net.ParseIP(s.Spec.ClusterIP).To4()
}
