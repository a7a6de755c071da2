{{/* Names, labels and the worker Deployment shared by the platform's and the tenants' workers. */}}

{{- define "visor-fleet.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "visor-fleet.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "visor-fleet.selectorLabels" -}}
app.kubernetes.io/name: {{ include "visor-fleet.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "visor-fleet.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "visor-fleet.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* The platform worker's service account. */}}
{{- define "visor-fleet.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "visor-fleet.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/*
The workers to render, each as a dict: component (label value), name (object
name), serviceAccount, registerSearchAttributes, spec (the worker's values).
A tenant worker inherits only scheduling and sizing from .Values.worker,
never its clusters or credentials.
*/}}
{{- define "visor-fleet.workers" -}}
{{- $root := . -}}
{{- $full := include "visor-fleet.fullname" . -}}
{{- $workers := list -}}
{{- if .Values.worker.enabled -}}
{{- $workers = append $workers (dict "component" "worker" "name" $full "serviceAccount" (include "visor-fleet.serviceAccountName" .) "registerSearchAttributes" .Values.temporal.registerSearchAttributes "spec" .Values.worker) -}}
{{- end -}}
{{- $seen := dict -}}
{{- range $i, $t := .Values.tenantWorkers -}}
{{- if not (regexMatch "^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$" (toString $t.name)) -}}
{{- fail (printf "tenantWorkers[%d].name %q must be a lower-case DNS label of at most 40 characters" $i (toString $t.name)) -}}
{{- end -}}
{{- if hasKey $seen $t.name -}}
{{- fail (printf "tenantWorkers[%d].name %q is used twice" $i $t.name) -}}
{{- end -}}
{{- $_ := set $seen $t.name true -}}
{{- if not $t.taskQueue -}}
{{- fail (printf "tenantWorkers[%d].taskQueue is required: the tenant's task queue, which its pools name as providerTaskQueue" $i) -}}
{{- end -}}
{{- if eq $t.taskQueue $root.Values.worker.taskQueue -}}
{{- fail (printf "tenantWorkers[%d].taskQueue %q is the platform worker's queue; a tenant worker polls its own" $i $t.taskQueue) -}}
{{- end -}}
{{- $base := pick $root.Values.worker "resources" "nodeSelector" "tolerations" "affinity" "spreadAcrossNodes" "podDisruptionBudget" "maxConcurrentActivities" "stickyCacheSize" -}}
{{- $spec := mergeOverwrite (deepCopy $base) (dict "replicas" 1 "clusters" list "orgs" list "credentials" list "secretFiles" list "extraArgs" list "extraEnv" list "podAnnotations" dict "podLabels" dict) (deepCopy $t) -}}
{{- $name := printf "%s-%s" $full $t.name | trunc 63 | trimSuffix "-" -}}
{{- $sa := $name -}}
{{- if not $root.Values.serviceAccount.create -}}
{{- $sa = default (include "visor-fleet.serviceAccountName" $root) $t.serviceAccountName -}}
{{- end -}}
{{- $workers = append $workers (dict "component" (printf "tenant-%s" $t.name) "name" $name "serviceAccount" $sa "registerSearchAttributes" false "spec" $spec) -}}
{{- end -}}
{{- toJson $workers -}}
{{- end -}}

{{- define "visor-fleet.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
