{{/* The release's name prefix, at most 63 characters with a service's suffix. */}}
{{- define "tollgate.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}{{ .Release.Name | trunc 40 | trimSuffix "-" }}{{- else -}}{{ printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" }}{{- end -}}
{{- end -}}

{{- define "tollgate.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Selector labels of one service: (dict "root" $ "name" "gateway"). */}}
{{- define "tollgate.selector" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .name }}
{{- end -}}

{{- define "tollgate.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "tollgate.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}{{ .Values.serviceAccount.name | default (include "tollgate.fullname" .) }}{{- else -}}{{ .Values.serviceAccount.name | default "default" }}{{- end -}}
{{- end -}}

{{- define "tollgate.secretEnv" -}}
- name: {{ .env }}
  valueFrom:
    secretKeyRef:
      name: {{ .ref.name }}
      key: {{ .ref.key }}
      {{- if .ref.optional }}
      optional: true
      {{- end }}
{{- end -}}

{{/* What every process reads: the database, the broker, logs. */}}
{{- define "tollgate.commonEnv" -}}
{{ include "tollgate.secretEnv" (dict "env" "DATABASE_URL" "ref" .Values.database.urlSecret) }}
- name: KAFKA_BROKERS
  value: {{ .Values.kafka.brokers | quote }}
- name: KAFKA_TOPIC_PREFIX
  value: {{ .Values.kafka.topicPrefix | quote }}
- name: LOG_FORMAT
  value: json
{{- end -}}

{{/* The variables of one service: (dict "root" $ "name" "gateway" "svc" $svc). */}}
{{- define "tollgate.serviceEnv" -}}
{{- $v := .root.Values -}}
{{ include "tollgate.commonEnv" .root }}
- name: HOST
  value: 0.0.0.0
- name: PORT
  value: {{ .svc.port | quote }}
{{ include "tollgate.secretEnv" (dict "env" "METRICS_TOKEN" "ref" $v.secrets.metricsToken) }}
{{ include "tollgate.secretEnv" (dict "env" (printf "%s_ADMIN_TOKEN" (upper .name)) "ref" (.svc.adminTokenSecret | default $v.secrets.adminToken)) }}
{{- if eq .name "gateway" }}
{{ include "tollgate.secretEnv" (dict "env" "GATEWAY_CURSOR_SECRET" "ref" $v.secrets.cursorSecret) }}
{{- with $v.gateway.publicUrl }}
- name: GATEWAY_PUBLIC_URL
  value: {{ . | quote }}
{{- end }}
{{- with $v.gateway.trustedProxies }}
- name: GATEWAY_TRUSTED_PROXIES
  value: {{ . | quote }}
{{- end }}
{{- with $v.gateway.allowedHosts }}
- name: GATEWAY_ALLOWED_HOSTS
  value: {{ . | quote }}
{{- end }}
{{- end }}
{{- if or (eq .name "discovery") (eq .name "execution") }}
{{ include "tollgate.secretEnv" (dict "env" "UPSTREAM_CREDENTIALS" "ref" $v.secrets.upstreamCredentials) }}
{{- end }}
{{- range $k, $val := merge (dict) .svc.env $v.extraEnv }}
- name: {{ $k }}
  value: {{ $val | quote }}
{{- end }}
{{- end -}}
