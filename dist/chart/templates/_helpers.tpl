{{/* Labels on every object, as config/default sets them. */}}
{{- define "aso.labels" -}}
app.kubernetes.io/name: agent-session-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end }}

{{/* The manager's ServiceAccount as an RBAC subject. */}}
{{- define "aso.subject" -}}
- kind: ServiceAccount
  name: agent-session-operator-controller-manager
  namespace: {{ .Release.Namespace }}
{{- end }}

{{- define "aso.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* The manager Pod template (manager + transcript-store sidecar), indented for a workload's
spec.template: the Deployment's with one shard; with more, each StatefulSet Pod's, which
takes its shard from its ordinal and its volume from the StatefulSet's claim template. */}}
{{- define "aso.managerPod" -}}
{{- $sharded := gt (int .Values.shards) 1 }}
    metadata:
      labels:
        app.kubernetes.io/name: agent-session-operator
        control-plane: controller-manager
      annotations:
        kubectl.kubernetes.io/default-container: manager
    spec:
      serviceAccountName: agent-session-operator-controller-manager
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: 30
      securityContext:
        runAsNonRoot: true
        fsGroup: 65532
        seccompProfile:
          type: RuntimeDefault
      containers:
      - name: manager
        image: {{ include "aso.image" . }}
        imagePullPolicy: {{ .Values.image.pullPolicy }}
        command: ["/manager"]
        args:
        - --leader-elect
        - --metrics-bind-address=:8443
        - --health-probe-bind-address=:8081
        - --transcript-socket=/run/agent-sessions/transcript.sock
        {{- if $sharded }}
        - --shard=$(SHARD_INDEX)/{{ .Values.shards }}
        {{- end }}
        - --workspace-root=/var/lib/agent-sessions/workspaces
        - --max-concurrent-turns={{ .Values.manager.maxConcurrentTurns }}
        - --webhook-certs={{ if eq .Values.webhook.certs "self-signed" }}self-signed{{ else }}provided{{ end }}
        - --a2a-read-limit={{ .Values.manager.a2aReadLimit }}
        - --mcp-read-limit={{ .Values.manager.mcpReadLimit }}
        {{- range .Values.manager.egress.allow }}
        - --egress-allow={{ . }}
        {{- end }}
        {{- if .Values.manager.egress.denyUnlisted }}
        - --egress-deny-unlisted
        {{- end }}
        {{- with .Values.manager.toolCreatesPerMinute }}
        - --tool-creates-per-minute={{ . }}
        {{- end }}
        {{- with .Values.manager.ttlAfterFinished }}
        - --ttl-after-finished={{ . }}
        {{- end }}
        {{- if .Values.sandboxes.enabled }}
        - --sandboxes
        {{- with .Values.sandboxes.image }}
        - --sandbox-image={{ . }}
        {{- end }}
        {{- end }}
        {{- range .Values.manager.extraArgs }}
        - {{ . | quote }}
        {{- end }}
        env:
        - name: POD_NAMESPACE
          valueFrom: {fieldRef: {fieldPath: metadata.namespace}}
        {{- if $sharded }}
        - name: SHARD_INDEX
          valueFrom: {fieldRef: {fieldPath: "metadata.labels['apps.kubernetes.io/pod-index']"}}
        {{- end }}
        - name: CONTAINER_MEMORY_LIMIT
          valueFrom: {resourceFieldRef: {containerName: manager, resource: limits.memory}}
        {{- with .Values.manager.extraEnv }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
        ports:
        - {name: webhook, containerPort: 9443, protocol: TCP}
        - {name: metrics, containerPort: 8443, protocol: TCP}
        livenessProbe:
          httpGet: {path: /healthz, port: 8081}
          initialDelaySeconds: 15
          periodSeconds: 20
        readinessProbe:
          httpGet: {path: /readyz, port: 8081}
          initialDelaySeconds: 5
          periodSeconds: 10
        resources: {{- toYaml .Values.manager.resources | nindent 10 }}
        securityContext:
          allowPrivilegeEscalation: false
          readOnlyRootFilesystem: true
          capabilities: {drop: ["ALL"]}
        volumeMounts:
        - {name: socket, mountPath: /run/agent-sessions}
        - {name: transcripts, mountPath: /var/lib/agent-sessions}
        - {name: webhook-certs, mountPath: /tmp/k8s-webhook-server/serving-certs, readOnly: true}
        - {name: manager-token, mountPath: /var/run/secrets/kubernetes.io/serviceaccount, readOnly: true}
      - name: transcript-store
        image: {{ include "aso.image" . }}
        imagePullPolicy: {{ .Values.image.pullPolicy }}
        command: ["/transcript-store"]
        args:
        - --data-dir=/var/lib/agent-sessions/transcripts
        - --socket=/run/agent-sessions/transcript.sock
        - --listen=:8090
        - --tls-cert-dir=/tmp/history-server/serving-certs
        - --token-audiences=agent-sessions
        - --max-streams-per-user={{ .Values.transcriptStore.maxStreamsPerUser }}
        - --max-mcp-sessions-per-user={{ .Values.transcriptStore.maxMCPSessionsPerUser }}
        - --mcp-session-idle-timeout={{ .Values.transcriptStore.mcpSessionIdleTimeout }}
        - --api-qps-per-user={{ .Values.transcriptStore.apiQPSPerUser }}
        - --api-burst-per-user={{ .Values.transcriptStore.apiBurstPerUser }}
        {{- if $sharded }}
        - --shard=$(SHARD_INDEX)/{{ .Values.shards }}
        - --shard-url=https://agent-session-operator-shard-{i}.{{ .Release.Namespace }}.svc:8090
        - --shard-server-name=agent-session-operator-history.{{ .Release.Namespace }}.svc
        {{- end }}
        {{- with .Values.transcriptStore.archivedTranscriptRetention }}
        - --archived-transcript-retention={{ . }}
        {{- end }}
        {{- if .Values.transcriptStore.a2aCardSigningSecret }}
        - --a2a-card-signing-key=/etc/agent-sessions/a2a-card-signing/key.pem
        {{- end }}
        env:
        - name: CONTAINER_MEMORY_LIMIT
          valueFrom: {resourceFieldRef: {containerName: transcript-store, resource: limits.memory}}
        {{- if $sharded }}
        - name: SHARD_INDEX
          valueFrom: {fieldRef: {fieldPath: "metadata.labels['apps.kubernetes.io/pod-index']"}}
        {{- end }}
        ports:
        - {name: history, containerPort: 8090, protocol: TCP}
        livenessProbe:
          httpGet: {path: /healthz, port: 8090, scheme: HTTPS}
          periodSeconds: 20
        readinessProbe:
          httpGet: {path: /readyz, port: 8090, scheme: HTTPS}
          periodSeconds: 10
        resources: {{- toYaml .Values.transcriptStore.resources | nindent 10 }}
        securityContext:
          allowPrivilegeEscalation: false
          readOnlyRootFilesystem: true
          capabilities: {drop: ["ALL"]}
        volumeMounts:
        - {name: socket, mountPath: /run/agent-sessions}
        - {name: transcripts, mountPath: /var/lib/agent-sessions}
        - {name: transcript-store-token, mountPath: /var/run/secrets/kubernetes.io/serviceaccount, readOnly: true}
        - {name: webhook-certs, mountPath: /tmp/history-server/serving-certs, readOnly: true}
        {{- if .Values.transcriptStore.a2aCardSigningSecret }}
        - {name: a2a-card-signing, mountPath: /etc/agent-sessions/a2a-card-signing, readOnly: true}
        {{- end }}
      volumes:
      # The Pod ServiceAccount's token, as the kubelet would mount it, for the manager only:
      # the network-facing sidecar gets its own identity, which may not read Secrets.
      - name: manager-token
        projected:
          sources:
          - serviceAccountToken: {path: token, expirationSeconds: 3607}
          - configMap: {name: kube-root-ca.crt, items: [{key: ca.crt, path: ca.crt}]}
          - downwardAPI: {items: [{path: namespace, fieldRef: {fieldPath: metadata.namespace}}]}
      - name: transcript-store-token
        secret:
          secretName: agent-session-operator-transcript-store-token
      - name: socket
        emptyDir: {}
      {{- if not $sharded }}
      - name: transcripts
        persistentVolumeClaim:
          claimName: agent-session-operator-transcripts
      {{- end }}
      - name: webhook-certs
        secret:
          secretName: agent-session-operator-webhook-server-cert
      {{- with .Values.transcriptStore.a2aCardSigningSecret }}
      - name: a2a-card-signing
        secret:
          secretName: {{ . }}
          items: [{key: key.pem, path: key.pem}]
      {{- end }}
{{- end }}
