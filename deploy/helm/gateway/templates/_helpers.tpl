{{/* Labels every object carries. */}}
{{- define "gateway.labels" -}}
app.kubernetes.io/part-of: inference-gateway
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The port of service $svc named $port, e.g. (include "gateway.port" (list $ "keys" "grpc")). */}}
{{- define "gateway.port" -}}
{{- $root := index . 0 -}}{{- $svc := index . 1 -}}{{- $name := index . 2 -}}
{{- $found := "" -}}
{{- range (index $root.Values.services $svc).ports -}}{{- if eq .name $name -}}{{- $found = .containerPort -}}{{- end -}}{{- end -}}
{{- required (printf "services.%s.ports has no port named %s" $svc $name) $found -}}
{{- end -}}

{{/* host:port of a gRPC service (the *_GRPC_ADDR variables). */}}
{{- define "gateway.grpcAddr" -}}
{{- printf "%s:%v" (index . 1) (include "gateway.port" (list (index . 0) (index . 1) "grpc")) -}}
{{- end -}}

{{/* http://host:port of a service's HTTP port (the *_HTTP_URL variables). */}}
{{- define "gateway.httpUrl" -}}
{{- printf "http://%s:%v" (index . 1) (include "gateway.port" (list (index . 0) (index . 1) "http")) -}}
{{- end -}}

{{/*
What each service reads besides its own values: the shared ConfigMap, its MONGO_URL, the identity secret, the
provider credentials, the catalogue, the webhook secrets key. This follows the code (each service's config
schema), so it is not a value.
*/}}
{{- define "gateway.needs" -}}
{{- $needs := dict
  "edge" (dict "shared" true "mongo" true "identity" true)
  "inference" (dict "shared" true "mongo" true "identity" true "providers" true "catalog" true)
  "keys" (dict "shared" true "mongo" true "identity" true)
  "billing" (dict "shared" true "mongo" true "identity" true "catalog" true)
  "batch" (dict "shared" true "mongo" true "identity" true "providers" true "catalog" true "inferenceGrpcClient" true)
  "webhooks" (dict "shared" true "mongo" true "identity" true "webhooksKey" true)
  "media" (dict "shared" true "mongo" true "identity" true "providers" true "catalog" true)
  "console" (dict "identity" true)
-}}
{{- toYaml (index $needs .) -}}
{{- end -}}

{{/* The addresses of the other services a service calls (name: value), as its config schema names them. */}}
{{- define "gateway.wiring" -}}
{{- $root := index . 0 -}}{{- $name := index . 1 -}}{{- $s := $root.Values.services -}}
{{- if eq $name "edge" }}
KEYS_GRPC_ADDR: {{ include "gateway.grpcAddr" (list $root "keys") }}
KEYS_HTTP_URL: {{ include "gateway.httpUrl" (list $root "keys") }}
BILLING_HTTP_URL: {{ include "gateway.httpUrl" (list $root "billing") }}
INFERENCE_HTTP_URL: {{ include "gateway.httpUrl" (list $root "inference") }}
{{- if $s.batch.enabled }}
BATCH_HTTP_URL: {{ include "gateway.httpUrl" (list $root "batch") }}
{{- end }}
{{- if $s.webhooks.enabled }}
WEBHOOKS_HTTP_URL: {{ include "gateway.httpUrl" (list $root "webhooks") }}
{{- end }}
{{- if $s.media.enabled }}
MEDIA_HTTP_URL: {{ include "gateway.httpUrl" (list $root "media") }}
{{- end }}
{{- if $s.console.enabled }}
CONSOLE_HTTP_URL: {{ include "gateway.httpUrl" (list $root "console") }}
{{- end }}
{{- else if eq $name "inference" }}
BILLING_GRPC_ADDR: {{ include "gateway.grpcAddr" (list $root "billing") }}
KEYS_GRPC_ADDR: {{ include "gateway.grpcAddr" (list $root "keys") }}
{{- else if eq $name "keys" }}
BILLING_GRPC_ADDR: {{ include "gateway.grpcAddr" (list $root "billing") }}
{{- else if eq $name "billing" }}
KEYS_GRPC_ADDR: {{ include "gateway.grpcAddr" (list $root "keys") }}
{{- else if eq $name "batch" }}
INFERENCE_GRPC_ADDR: {{ include "gateway.grpcAddr" (list $root "inference") }}
BILLING_GRPC_ADDR: {{ include "gateway.grpcAddr" (list $root "billing") }}
{{- else if eq $name "media" }}
BILLING_GRPC_ADDR: {{ include "gateway.grpcAddr" (list $root "billing") }}
{{- else if eq $name "console" }}
BIND_HOST: {{ $root.Values.config.BIND_HOST | quote }}
LOG_LEVEL: {{ $root.Values.config.LOG_LEVEL | quote }}
{{- end }}
{{- end -}}

{{/* The catalogue's JSON: the value, else the chart's files/catalog.json. */}}
{{- define "gateway.catalog" -}}
{{- .Values.catalog.json | default (.Files.Get "files/catalog.json") -}}
{{- end -}}

{{- define "gateway.image" -}}
{{- $root := index . 0 -}}
{{- printf "%s/%s:%s" $root.Values.image.registry (index . 1) ($root.Values.image.tag | default $root.Chart.AppVersion) -}}
{{- end -}}

{{/*
A service's own settings as ConfigMap data: its port variables, the addresses of the services it calls, the
catalogue's path, then services.<name>.env (which may override any of them).
*/}}
{{- define "gateway.serviceConfig" -}}
{{- $root := index . 0 -}}{{- $name := index . 1 -}}{{- $svc := index $root.Values.services $name -}}
{{- $data := dict -}}
{{- range $svc.ports -}}{{- $_ := set $data .env (toString .containerPort) -}}{{- end -}}
{{- range $k, $v := (include "gateway.wiring" (list $root $name) | fromYaml) -}}{{- $_ := set $data $k (toString $v) -}}{{- end -}}
{{- if (include "gateway.needs" $name | fromYaml).catalog -}}{{- $_ := set $data "CATALOG_FILE" "/etc/gateway/catalog.json" -}}{{- end -}}
{{- range $k, $v := $svc.env -}}{{- $_ := set $data $k (toString $v) -}}{{- end -}}
{{- range $k, $v := $data }}
{{ $k }}: {{ $v | quote }}
{{- end -}}
{{- end -}}
