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
