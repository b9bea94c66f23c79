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

package sandbox

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
	"k8s.io/streaming/pkg/httpstream"
)

// PodDial opens a connection to port on a Pod's loopback.
type PodDial func(ctx context.Context, namespace, pod string, port int) (net.Conn, error)

// PortForward is how the manager reaches sandboxd, which binds the Pod's loopback only: the
// API server's pods/portforward, the path agent-sandbox's Go client tunnels through in its
// port-forward mode. The kubelet enters the Pod's network namespace and dials
// localhost:port there, so no Service, router or ingress rule exposes sandboxd, and only a
// user allowed pods/portforward in the namespace (the manager) gets in. One SPDY connection
// per dial: gRPC keeps its one open, HTTP keep-alives reuse theirs.
func PortForward(cfg *rest.Config) (PodDial, error) {
	rt, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	var ids atomic.Int64
	return func(ctx context.Context, namespace, pod string, port int) (net.Conn, error) {
		u := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(namespace).Name(pod).SubResource("portforward").URL()
		dialer := spdy.NewDialerForStreaming(upgrader, &http.Client{Transport: rt}, http.MethodPost, u)
		conn, _, err := dialer.Dial(portforward.PortForwardProtocolV1Name)
		if err != nil {
			return nil, fmt.Errorf("port-forward to %s/%s: %w", namespace, pod, err)
		}
		h := http.Header{}
		h.Set(corev1.PortHeader, strconv.Itoa(port))
		h.Set(corev1.PortForwardRequestIDHeader, strconv.FormatInt(ids.Add(1), 10))
		h.Set(corev1.StreamType, corev1.StreamTypeError)
		errStream, err := conn.CreateStream(h)
		if err != nil {
			_ = conn.Close()
			return nil, err
		}
		_ = errStream.Close() // nothing to send on it; the kubelet writes dial errors there
		h.Set(corev1.StreamType, corev1.StreamTypeData)
		data, err := conn.CreateStream(h)
		if err != nil {
			_ = conn.Close()
			return nil, err
		}
		sc := &streamConn{conn: conn, data: data}
		go func() {
			// A failed dial inside the Pod arrives here; it ends the connection.
			if msg, _ := io.ReadAll(io.LimitReader(errStream, 4<<10)); len(msg) > 0 {
				_ = sc.Close()
			}
		}()
		return sc, nil
	}, nil
}

// streamConn is a port-forward data stream as a net.Conn.
type streamConn struct {
	conn httpstream.Connection
	data httpstream.Stream
}

func (s *streamConn) Read(p []byte) (int, error)  { return s.data.Read(p) }
func (s *streamConn) Write(p []byte) (int, error) { return s.data.Write(p) }
func (s *streamConn) Close() error {
	_ = s.data.Reset()
	return s.conn.Close()
}
func (s *streamConn) LocalAddr() net.Addr  { return pfAddr{} }
func (s *streamConn) RemoteAddr() net.Addr { return pfAddr{} }

// Deadlines are not supported by a port-forward stream; callers bound calls with contexts.
func (s *streamConn) SetDeadline(time.Time) error      { return nil }
func (s *streamConn) SetReadDeadline(time.Time) error  { return nil }
func (s *streamConn) SetWriteDeadline(time.Time) error { return nil }

type pfAddr struct{}

func (pfAddr) Network() string { return "portforward" }
func (pfAddr) String() string  { return "portforward" }
