{{/* Names ------------------------------------------------------------------------------------- */}}
{{- define "kubesched.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "kubesched.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "kubesched.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "kubesched.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: scheduler
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "kubesched.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kubesched.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "kubesched.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "kubesched.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Lease kubesched locks (leaderElection.resourceName / resourceNamespace). */}}
{{- define "kubesched.lockName" -}}
{{- default (include "kubesched.fullname" .) .Values.leaderElection.resourceName }}
{{- end }}
{{- define "kubesched.lockNamespace" -}}
{{- default .Release.Namespace .Values.leaderElection.resourceNamespace }}
{{- end }}

{{/*
The profiles written to the config: .Values.profiles with each enabled contrib plugin's `plugins`
fragment merged into every profile's `plugins` (enabled/disabled lists appended, names already
there left alone) and its `args` added to pluginConfig. Output: YAML list.
*/}}
{{- define "kubesched.profiles" -}}
{{- $profiles := list }}
{{- range $given := .Values.profiles }}
{{- $prof := deepCopy $given }}
{{- $plugins := deepCopy (default (dict) $prof.plugins) }}
{{- $pc := default (list) $prof.pluginConfig }}
{{- range $key := keys $.Values.contribPlugins | sortAlpha }}
{{- $cp := get $.Values.contribPlugins $key }}
{{- if $cp.enabled }}
{{- range $point := keys (default (dict) $cp.plugins) | sortAlpha }}
{{- $set := get $cp.plugins $point }}
{{- $cur := default (dict) (get $plugins $point) }}
{{- range $field := list "enabled" "disabled" }}
{{- $have := default (list) (get $cur $field) }}
{{- $names := list }}
{{- range $have }}{{- $names = append $names .name }}{{- end }}
{{- range (default (list) (get $set $field)) }}
{{- if not (has .name $names) }}{{- $have = append $have . }}{{- end }}
{{- end }}
{{- if $have }}{{- $_ := set $cur $field $have }}{{- end }}
{{- end }}
{{- $_ := set $plugins $point $cur }}
{{- end }}
{{- if $cp.args }}
{{- $names := list }}
{{- range $pc }}{{- $names = append $names .name }}{{- end }}
{{- if not (has $cp.name $names) }}
{{- $pc = append $pc (dict "name" $cp.name "args" $cp.args) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- if $plugins }}{{- $_ := set $prof "plugins" $plugins }}{{- end }}
{{- if $pc }}{{- $_ := set $prof "pluginConfig" $pc }}{{- end }}
{{- $profiles = append $profiles $prof }}
{{- end }}
{{- toYaml $profiles }}
{{- end }}

{{/*
Which plugins the RBAC is for, as JSON {name: true}. Plugins whose permissions depend on whether
they run, with the extension points they implement (runtime/src/kubesched/runtime/plugins/):
a default plugin counts as enabled in a profile unless its name or "*" is in
plugins.multiPoint.disabled, or in the `disabled` list of every extension point it implements;
naming it in any `enabled` list enables it. Enabled in one profile = granted. Contrib plugins:
contribPlugins.<x>.enabled, or named in any `enabled` list.
*/}}
{{- define "kubesched.pluginsOn" -}}
{{- $points := dict
  "DefaultPreemption" (list "postFilter")
  "VolumeBinding" (list "preFilter" "filter" "reserve" "preBind" "preScore" "score")
  "VolumeRestrictions" (list "preFilter" "filter")
  "NodeVolumeLimits" (list "preFilter" "filter")
  "VolumeZone" (list "preFilter" "filter")
  "InterPodAffinity" (list "preFilter" "filter" "preScore" "score")
  "PodTopologySpread" (list "preFilter" "filter" "preScore" "score")
  "DynamicResources" (list "preEnqueue" "preFilter" "filter" "postFilter" "score" "reserve" "preBind")
}}
{{- $profiles := include "kubesched.profiles" . | fromYamlArray }}
{{- $on := dict }}
{{- range $prof := $profiles }}
{{- $plugins := default (dict) $prof.plugins }}
{{- $enabled := list }}
{{- range $point, $set := $plugins }}
{{- range (default (list) (get (default (dict) $set) "enabled")) }}{{- $enabled = append $enabled .name }}{{- end }}
{{- end }}
{{- range $name, $pts := $points }}
{{- if has $name $enabled }}
{{- $_ := set $on $name true }}
{{- else }}
{{- $mp := list }}
{{- range (default (list) (dig "multiPoint" "disabled" (list) $plugins)) }}{{- $mp = append $mp .name }}{{- end }}
{{- if not (or (has $name $mp) (has "*" $mp)) }}
{{- range $pt := $pts }}
{{- $off := list }}
{{- range (default (list) (dig $pt "disabled" (list) $plugins)) }}{{- $off = append $off .name }}{{- end }}
{{- if not (or (has $name $off) (has "*" $off)) }}{{- $_ := set $on $name true }}{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- range $key, $cp := $.Values.contribPlugins }}
{{- if or $cp.enabled (has $cp.name $enabled) }}{{- $_ := set $on $cp.name true }}{{- end }}
{{- end }}
{{- end }}
{{- toJson $on }}
{{- end }}

{{/*
Which default plugins are built, as JSON {name: true}: kube-scheduler's pluginsNeeded builds
every plugin multiPoint enables, even one disabled at each of its extension points, and a built
plugin's informers run (DefaultPreemption's PodDisruptionBudgets). Built in a profile unless its
name or "*" is in plugins.multiPoint.disabled; naming it in any `enabled` list builds it.
*/}}
{{- define "kubesched.pluginsBuilt" -}}
{{- $profiles := include "kubesched.profiles" . | fromYamlArray }}
{{- $built := dict }}
{{- range $prof := $profiles }}
{{- $plugins := default (dict) $prof.plugins }}
{{- $mp := list }}
{{- range (default (list) (dig "multiPoint" "disabled" (list) $plugins)) }}{{- $mp = append $mp .name }}{{- end }}
{{- range $name := list "DefaultPreemption" "DynamicResources" "NodeResourcesFit" }}
{{- $enabled := false }}
{{- range $point, $set := $plugins }}
{{- range (default (list) (get (default (dict) $set) "enabled")) }}{{- if eq .name $name }}{{- $enabled = true }}{{- end }}{{- end }}
{{- end }}
{{- if or $enabled (not (or (has $name $mp) (has "*" $mp))) }}{{- $_ := set $built $name true }}{{- end }}
{{- end }}
{{- end }}
{{- toJson $built }}
{{- end }}

{{/* The KubeSchedulerConfiguration (config.yaml in the ConfigMap). */}}
{{- define "kubesched.config" -}}
{{- $cfg := dict "apiVersion" "kubescheduler.config.k8s.io/v1" "kind" "KubeSchedulerConfiguration" }}
{{- $le := dict "leaderElect" (.Values.leaderElection.enabled | default false) }}
{{- if .Values.leaderElection.enabled }}
{{- $_ := set $le "resourceLock" "leases" }}
{{- $_ := set $le "resourceName" (include "kubesched.lockName" .) }}
{{- $_ := set $le "resourceNamespace" (include "kubesched.lockNamespace" .) }}
{{- $_ := set $le "leaseDuration" .Values.leaderElection.leaseDuration }}
{{- $_ := set $le "renewDeadline" .Values.leaderElection.renewDeadline }}
{{- $_ := set $le "retryPeriod" .Values.leaderElection.retryPeriod }}
{{- end }}
{{- $_ := set $cfg "leaderElection" $le }}
{{- $_ := set $cfg "clientConnection" (dict "qps" .Values.clientConnection.qps "burst" .Values.clientConnection.burst) }}
{{- if not (kindIs "invalid" .Values.percentageOfNodesToScore) }}
{{- $_ := set $cfg "percentageOfNodesToScore" .Values.percentageOfNodesToScore }}
{{- end }}
{{- $_ := set $cfg "profiles" (include "kubesched.profiles" . | fromYamlArray) }}
{{- toYaml $cfg }}
{{- end }}
