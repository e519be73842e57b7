{{/* Chart name, truncated to a DNS label. */}}
{{- define "spiderduck.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* "<release>-<chart>" unless the release name already contains the chart name. */}}
{{- define "spiderduck.fullname" -}}
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

{{/* Name of one role's resources: (dict "ctx" $ "role" "fetcher"). */}}
{{- define "spiderduck.roleName" -}}
{{- printf "%s-%s" (include "spiderduck.fullname" .ctx) .role | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "spiderduck.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels common to every resource. */}}
{{- define "spiderduck.labels" -}}
helm.sh/chart: {{ include "spiderduck.chart" . }}
{{ include "spiderduck.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: spiderduck
{{- end }}

{{- define "spiderduck.selectorLabels" -}}
app.kubernetes.io/name: {{ include "spiderduck.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Labels of one role: (dict "ctx" $ "role" "fetcher"). */}}
{{- define "spiderduck.roleLabels" -}}
{{ include "spiderduck.labels" .ctx }}
app.kubernetes.io/component: {{ .role }}
{{- end }}

{{- define "spiderduck.roleSelectorLabels" -}}
{{ include "spiderduck.selectorLabels" .ctx }}
app.kubernetes.io/component: {{ .role }}
{{- end }}

{{- define "spiderduck.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "spiderduck.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* repository@digest when image.digest is set (the tag is then ignored), else repository:tag. */}}
{{- define "spiderduck.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* The image of a role's pods, (dict "ctx" $ "role" R): spiderduck.image, except for the
     fetchers with render.enabled, which run Chromium: the same tag plus render.imageTagSuffix
     (the Dockerfile's RENDER=1 build), or with image.digest the -render image's own digest,
     render.imageDigest. */}}
{{- define "spiderduck.roleImage" -}}
{{- $v := .ctx.Values }}
{{- if and (eq .role "fetcher") $v.render.enabled }}
{{- if $v.image.digest }}
{{- printf "%s@%s" $v.image.repository (required "render.enabled with image.digest: set render.imageDigest to the digest of the -render image (built with --build-arg RENDER=1), which the fetchers run" $v.render.imageDigest) }}
{{- else }}
{{- printf "%s:%s%s" $v.image.repository (default .ctx.Chart.AppVersion $v.image.tag) $v.render.imageTagSuffix }}
{{- end }}
{{- else }}
{{- include "spiderduck.image" .ctx }}
{{- end }}
{{- end }}

{{/* The roles the chart runs, each with its own config.yaml (ConfigMap "<role name>-config"):
     the long-running roles and the schema hook Job. */}}
{{- define "spiderduck.roles" -}}
fetcher scheduler metadata-api
{{- end }}

{{/* Files from Secrets and ConfigMaps that one role's process reads: (dict "ctx" $ "role" R).
     YAML {mounts: [{name, secret or configMap, dir, items: [{key, path}]}], paths: {handle: file}}.
     It is the one list behind a role's volumes, its volumeMounts and the file paths in its
     config.yaml, so a role mounts exactly the files its config names, and a Secret reaches no
     role that does not use it. */}}
{{- define "spiderduck.files" -}}
{{- $v := .ctx.Values }}
{{- $role := .role }}
{{- $f := dict "mounts" list "paths" dict }}
{{- with include "spiderduck.tlsSecret" . }}
{{- $_ := include "spiderduck.addMount" (dict "f" $f "name" "tls" "secret" . "items" (list
    (dict "key" "tls.crt" "handle" "tls.cert") (dict "key" "tls.key" "handle" "tls.key") (dict "key" "ca.crt" "handle" "tls.ca"))) }}
{{- with $v.tls.crl.existingSecret }}
{{- $_ := include "spiderduck.addMount" (dict "f" $f "name" "tls-crl" "secret" . "items" (list
    (dict "key" $v.tls.crl.key "path" "ca.crl" "handle" "tls.crl"))) }}
{{- end }}
{{- end }}
{{- include "spiderduck.checkTlsCrl" .ctx }}
{{- if has $role (list "fetcher" "scheduler" "metadata-api") }}
{{- $auth := include "spiderduck.natsAuth" . | fromYaml }}
{{- if or $auth.type $auth.existingSecret }}
{{- if not (and $auth.type $auth.existingSecret) }}
{{- fail (printf "%s: set both type (creds, nkey, token or password) and existingSecret, or neither" $auth.what) }}
{{- end }}
{{- if ne (eq $auth.type "password") (not (empty $auth.user)) }}
{{- fail (printf "%s.user: set it with type password (the user whose password the Secret holds), and only then" $auth.what) }}
{{- end }}
{{- $file := get (include "spiderduck.natsAuthFiles" . | fromYaml) $auth.type }}
{{- $_ := include "spiderduck.addMount" (dict "f" $f "name" "nats-auth" "secret" $auth.existingSecret "items" (list
    (dict "key" (default $file $auth.key) "path" $file "handle" "nats.auth"))) }}
{{- end }}
{{- $_ := include "spiderduck.addSource" (dict "f" $f "name" "nats-ca" "source" $v.nats.tls.ca "what" "nats.tls.ca" "path" "ca.crt" "handle" "nats.ca") }}
{{- with $v.nats.tls.clientSecret }}
{{- $_ := include "spiderduck.addMount" (dict "f" $f "name" "nats-client" "secret" . "items" (list
    (dict "key" "tls.crt" "handle" "nats.cert") (dict "key" "tls.key" "handle" "nats.key"))) }}
{{- end }}
{{- end }}
{{- if eq $role "metadata-api" }}
{{- with $v.metadataApi.tokens.existingSecret }}
{{- $_ := include "spiderduck.addMount" (dict "f" $f "name" "api-tokens" "secret" . "items" (list
    (dict "key" $v.metadataApi.tokens.key "path" "tokens" "handle" "api.tokens"))) }}
{{- end }}
{{- with $v.metadataApi.adminTokens.existingSecret }}
{{- $_ := include "spiderduck.addMount" (dict "f" $f "name" "api-admin-tokens" "secret" . "items" (list
    (dict "key" $v.metadataApi.adminTokens.key "path" "admin-tokens" "handle" "api.adminTokens"))) }}
{{- end }}
{{- if and $v.web.enabled $v.web.tls.existingSecret }}
{{- $_ := include "spiderduck.addMount" (dict "f" $f "name" "web-tls" "secret" $v.web.tls.existingSecret "items" (list
    (dict "key" "tls.crt" "handle" "web.cert") (dict "key" "tls.key" "handle" "web.key"))) }}
{{- end }}
{{- end }}
{{- if has $role (list "scheduler" "metadata-api" "schema") }}
{{- $c := $v.cassandra }}
{{- if ne (empty $c.auth.username) (empty $c.auth.existingSecret) }}
{{- fail "cassandra.auth: set both username and existingSecret (the Secret holding its password), or neither" }}
{{- end }}
{{- with $c.auth.existingSecret }}
{{- $_ := include "spiderduck.addMount" (dict "f" $f "name" "cassandra-auth" "secret" . "items" (list
    (dict "key" $c.auth.key "path" "password" "handle" "cassandra.password"))) }}
{{- end }}
{{- include "spiderduck.addStoreTls" (dict "f" $f "name" "cassandra" "tls" $c.tls) }}
{{- end }}
{{- if or (eq $role "scheduler") (and (eq $role "metadata-api") (include "spiderduck.apiReadsContent" .ctx)) }}
{{- include "spiderduck.addStoreTls" (dict "f" $f "name" "hdfs" "tls" $v.hdfs.tls) }}
{{- end }}
{{- if and (eq $role "fetcher") $v.memcached.host }}
{{- include "spiderduck.addStoreTls" (dict "f" $f "name" "memcached" "tls" $v.memcached.tls) }}
{{- end }}
{{- toYaml $f }}
{{- end }}

{{/* Adds a store's TLS files, (dict "f" $f "name" STORE "tls" .Values.STORE.tls): its CA
     ("STORE.ca") and, where the store takes one, its client certificate ("STORE.cert",
     "STORE.key"); refused while STORE.tls.enabled is off. */}}
{{- define "spiderduck.addStoreTls" -}}
{{- $t := .tls }}
{{- if and (not $t.enabled) (or $t.ca.secret $t.ca.configMap $t.clientSecret) }}
{{- fail (printf "%s.tls: ca or clientSecret is set but %s.tls.enabled is false" .name .name) }}
{{- end }}
{{- if $t.enabled }}
{{- $_ := include "spiderduck.addSource" (dict "f" .f "name" (printf "%s-ca" .name) "source" $t.ca "what" (printf "%s.tls.ca" .name) "path" "ca.crt" "handle" (printf "%s.ca" .name)) }}
{{- with $t.clientSecret }}
{{- $_ := include "spiderduck.addMount" (dict "f" $.f "name" (printf "%s-client" $.name) "secret" . "items" (list
    (dict "key" "tls.crt" "handle" (printf "%s.cert" $.name)) (dict "key" "tls.key" "handle" (printf "%s.key" $.name)))) }}
{{- end }}
{{- end }}
{{- end }}

{{/* A store URL's file options, (dict "paths" $paths "options" (list (list OPTION HANDLE) ...)):
     "OPTION=FILE" joined by "&", for each handle spiderduck.files mounted in this role. */}}
{{- define "spiderduck.fileOptions" -}}
{{- $out := list }}
{{- range $o := .options }}
{{- with index $.paths (index $o 1) }}
{{- $out = append $out (printf "%s=%s" (index $o 0) .) }}
{{- end }}
{{- end }}
{{- join "&" $out }}
{{- end }}

{{/* The NATS credentials of one role, (dict "ctx" $ "role" R), as YAML: its own
     <role>.natsAuth (scheduler, fetcher, metadataApi) when that sets type or existingSecret,
     else nats.auth, the default of every role; "what" names the values path, for errors. */}}
{{- define "spiderduck.natsAuth" -}}
{{- $v := .ctx.Values }}
{{- $key := get (dict "fetcher" "fetcher" "scheduler" "scheduler" "metadata-api" "metadataApi") .role }}
{{- $own := dict }}
{{- if $key }}{{ $own = (get $v $key).natsAuth | default dict }}{{ end }}
{{- if or $own.type $own.existingSecret }}
{{- toYaml (merge (dict "what" (printf "%s.natsAuth" $key)) $own) }}
{{- else }}
{{- toYaml (merge (dict "what" "nats.auth") $v.nats.auth) }}
{{- end }}
{{- end }}

{{/* nats.auth.type -> the file its Secret key is mounted as (and the key read when
     nats.auth.key is empty). */}}
{{- define "spiderduck.natsAuthFiles" -}}
{creds: nats.creds, nkey: nkey.seed, token: token, password: password}
{{- end }}

{{/* nats.auth.type -> the config key naming that file. */}}
{{- define "spiderduck.natsAuthKeys" -}}
{creds: nats_creds, nkey: nats_nkey_seed, token: nats_token_file, password: nats_password_file}
{{- end }}

{{/* Adds the file of a {secret, configMap, key} value (one of the two objects, or none) to
     spiderduck.files' lists: (dict "f" $f "name" N "source" S "what" "value.path" "path" FILE
     "handle" H). */}}
{{- define "spiderduck.addSource" -}}
{{- $s := .source }}
{{- if and $s.secret $s.configMap }}
{{- fail (printf "%s: set secret or configMap, not both" .what) }}
{{- end }}
{{- if or $s.secret $s.configMap }}
{{- $_ := include "spiderduck.addMount" (dict "f" .f "name" .name "secret" $s.secret "configMap" $s.configMap "items" (list
    (dict "key" $s.key "path" .path "handle" .handle))) }}
{{- end }}
{{- end }}

{{/* Whether TLS is on for the service's gRPC: "true" or "". On for every role at once. */}}
{{- define "spiderduck.tlsOn" -}}
{{- $t := .Values.tls }}
{{- if or $t.existingSecret $t.roleSecrets.fetcher $t.roleSecrets.scheduler $t.roleSecrets.metadataApi }}true{{ end }}
{{- end }}

{{/* The kubernetes.io/tls Secret of a long-running role, (dict "ctx" $ "role" R):
     tls.roleSecrets' own, else tls.existingSecret; empty with TLS off and for the schema Job.
     With TLS on, a role left with neither is refused (it would speak plaintext to the others). */}}
{{- define "spiderduck.tlsSecret" -}}
{{- $key := get (dict "fetcher" "fetcher" "scheduler" "scheduler" "metadata-api" "metadataApi") .role }}
{{- if and $key (include "spiderduck.tlsOn" .ctx) }}
{{- $t := .ctx.Values.tls }}
{{- $name := index $t.roleSecrets $key | default $t.existingSecret }}
{{- if not $name }}
{{- fail (printf "tls.roleSecrets.%s: TLS is on for the other roles, so set it or tls.existingSecret (the %s would speak plaintext)" $key .role) }}
{{- end }}
{{- $name }}
{{- end }}
{{- end }}

{{/* Refuses tls.crl.existingSecret where config tls.crl would be refused: a revocation list of
     client certificates needs TLS on (tls.existingSecret or tls.roleSecrets) and clients asked
     for a certificate (tls.clientAuth require, the default). */}}
{{- define "spiderduck.checkTlsCrl" -}}
{{- $t := .Values.tls }}
{{- if $t.crl.existingSecret }}
{{- if not (include "spiderduck.tlsOn" .) }}
{{- fail "tls.crl.existingSecret is set but TLS is off: set tls.existingSecret (or tls.roleSecrets) too; without client certificates there is nothing to revoke" }}
{{- end }}
{{- if eq $t.clientAuth "none" }}
{{- fail "tls.crl.existingSecret needs tls.clientAuth require (or empty): with none no client certificate is asked for, so there is nothing to revoke" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Adds one volume to spiderduck.files' lists: (dict "f" $f "name" N "secret" S or "configMap" C
     "items" (list (dict "key" K "handle" H ["path" P]))). Each key is mounted as file P (default
     K) in N's own folder, and paths[H] is that file. */}}
{{- define "spiderduck.addMount" -}}
{{- $dir := include "spiderduck.filesDir" .name }}
{{- $items := list }}
{{- range .items }}
{{- $path := default .key .path }}
{{- $items = append $items (dict "key" .key "path" $path) }}
{{- $_ := set $.f.paths .handle (printf "%s/%s" $dir $path) }}
{{- end }}
{{- $mount := dict "name" .name "dir" $dir "items" $items }}
{{- if .secret }}
{{- $_ := set $mount "secret" .secret }}
{{- else }}
{{- $_ := set $mount "configMap" .configMap }}
{{- end }}
{{- $_ := set .f "mounts" (append .f.mounts $mount) }}
{{- end }}

{{/* Where the chart mounts a Secret or ConfigMap of files: a folder of its own per volume. */}}
{{- define "spiderduck.filesDir" -}}
/var/run/secrets/spiderduck/{{ . }}
{{- end }}

{{/* The metadata store URL, for the roles that open it: (dict "ctx" $ "role" R).
     cassandra://[USER@]h1,h2:PORT/KEYSPACE?consistency=&dc=&replication=[&ssl=true[&check_hostname=false]][&ca=&cert=&key=][&password_file=],
     the files being the ones mounted in that role's pods. */}}
{{- define "spiderduck.metadataStore" -}}
{{- $c := .ctx.Values.cassandra }}
{{- $paths := (include "spiderduck.files" . | fromYaml).paths }}
{{- $user := "" }}
{{- with $c.auth.username }}{{ $user = printf "%s@" . }}{{ end }}
{{- $store := printf "cassandra://%s%s:%v/%s" $user (join "," $c.contactPoints) $c.port $c.keyspace }}
{{- $options := list }}
{{- range $key := list "consistency" "dc" "replication" }}
{{- with index $c $key }}
{{- $options = append $options (printf "%s=%v" $key .) }}
{{- end }}
{{- end }}
{{- if $c.tls.enabled }}
{{- $options = append $options "ssl=true" }}
{{- if not $c.tls.checkHostname }}
{{- $options = append $options "check_hostname=false" }}
{{- end }}
{{- end }}
{{- with include "spiderduck.fileOptions" (dict "paths" $paths "options" (list (list "ca" "cassandra.ca") (list "cert" "cassandra.cert") (list "key" "cassandra.key") (list "password_file" "cassandra.password"))) }}
{{- $options = append $options . }}
{{- end }}
{{- if $options }}
{{- $store = printf "%s?%s" $store (join "&" $options) }}
{{- end }}
{{- $store }}
{{- end }}

{{/* Whether the content store the schedulers write is one the metadata API can read too:
     "true" or "". The chart's own (HDFS), or a config.content_store hdfs:// or hdfs+https://
     URL; a file:// one (config.content_store) lives in each pod's emptyDir, so another pod's
     copy is empty. */}}
{{- define "spiderduck.contentShared" -}}
{{- $store := index .Values.config "content_store" }}
{{- if or (not $store) (regexMatch "^hdfs(\\+https)?://" (toString $store)) }}true{{ end }}
{{- end }}

{{/* The metadata API's metadata_api.explain_workers as rendered before config is merged:
     metadataApi.explainWorkers with a shared content store, else 0 (ExplainUrl explains from
     the stored record alone, and says so). */}}
{{- define "spiderduck.explainWorkers" -}}
{{- ternary (int .Values.metadataApi.explainWorkers) 0 (not (empty (include "spiderduck.contentShared" .))) }}
{{- end }}

{{/* Whether the metadata API opens the content store: "true" or "". Whenever it is shared
     (HDFS), whatever the explain workers: Forget erases from it (issue 39), and ExplainUrl
     re-reads stored pages from it. Then its pods get the scheduler's content_store, the HDFS CA
     and the NetworkPolicy egress to HDFS. */}}
{{- define "spiderduck.apiReadsContent" -}}
{{- if include "spiderduck.contentShared" . }}true{{ end }}
{{- end }}

{{/* The content store URL, for the schedulers and, when it reads it (spiderduck.apiReadsContent),
     the metadata API: (dict "ctx" $ "role" R); the same URL in both, the CA mounted at the same
     path. hdfs://NAMENODE/PATH?user=U[&roll_bytes=&roll_seconds=], hdfs+https://... with hdfs.tls
     (and &ca= its CA file). */}}
{{- define "spiderduck.contentStore" -}}
{{- $v := .ctx.Values }}
{{- $paths := (include "spiderduck.files" . | fromYaml).paths }}
{{- $content := printf "%s://%s/%s?user=%s" (ternary "hdfs+https" "hdfs" $v.hdfs.tls.enabled) $v.hdfs.namenode (trimPrefix "/" $v.hdfs.path) $v.hdfs.user }}
{{- with $v.hdfs.rollBytes }}
{{- $content = printf "%s&roll_bytes=%v" $content (int64 .) }}
{{- end }}
{{- with $v.hdfs.rollSeconds }}
{{- $content = printf "%s&roll_seconds=%v" $content . }}
{{- end }}
{{- with include "spiderduck.fileOptions" (dict "paths" $paths "options" (list (list "ca" "hdfs.ca"))) }}
{{- $content = printf "%s&%s" $content . }}
{{- end }}
{{- $content }}
{{- end }}

{{/* The robots.txt cache URL, for the fetchers: (dict "ctx" $ "role" "fetcher"). Empty without
     memcached.host; memcached://HOST:PORT, or memcacheds://HOST:PORT[?ca=FILE] with memcached.tls. */}}
{{- define "spiderduck.robotsCache" -}}
{{- $v := .ctx.Values }}
{{- if $v.memcached.host }}
{{- $paths := (include "spiderduck.files" . | fromYaml).paths }}
{{- $url := printf "%s://%s:%v" (ternary "memcacheds" "memcached" $v.memcached.tls.enabled) $v.memcached.host $v.memcached.port }}
{{- with include "spiderduck.fileOptions" (dict "paths" $paths "options" (list (list "ca" "memcached.ca"))) }}
{{- $url = printf "%s?%s" $url . }}
{{- end }}
{{- $url }}
{{- end }}
{{- end }}

{{/* Every fetcher pod's stable address, <pod>.<headless service>.<namespace>.svc:<port>, up to
     fetcher.replicas (the names the fetchers advertise in their shard leases). */}}
{{- define "spiderduck.fetcherAddresses" -}}
{{- $name := include "spiderduck.roleName" (dict "ctx" . "role" "fetcher") }}
{{- $out := list }}
{{- range $i := until (int .Values.fetcher.replicas) }}
{{- $out = append $out (printf "%s-%d.%s.%s.svc:%v" $name $i $name $.Release.Namespace $.Values.fetcher.port) }}
{{- end }}
{{- toYaml $out }}
{{- end }}

{{/* The config.yaml of one role, (dict "ctx" $ "role" R): only the keys that role uses (the
     external services it reaches, its listen address, the files mounted in its pods), then
     .Values.config merged over it. */}}
{{- define "spiderduck.config" -}}
{{- $v := .ctx.Values }}
{{- $role := .role }}
{{- $cfg := dict "data_dir" $v.dataDir }}
{{- $paths := (include "spiderduck.files" . | fromYaml).paths }}
{{- if ne $role "schema" }}
{{- $_ := set $cfg "nats_url" (required "nats.url is required: SpiderDuck uses an external NATS with JetStream" $v.nats.url) }}
{{- $_ := set $cfg "nats_replicas" (int (default 1 $v.nats.replicas)) }}
{{- end }}
{{- with index $paths "nats.auth" }}
{{- $auth := include "spiderduck.natsAuth" $ | fromYaml }}
{{- $_ := set $cfg (get (include "spiderduck.natsAuthKeys" $ | fromYaml) $auth.type) . }}
{{- with $auth.user }}{{ $_ := set $cfg "nats_user" . }}{{ end }}
{{- end }}
{{- range $handle, $key := dict "nats.ca" "nats_tls_ca" "nats.cert" "nats_tls_cert" "nats.key" "nats_tls_key" }}
{{- with index $paths $handle }}{{ $_ := set $cfg $key . }}{{ end }}
{{- end }}
{{- $tls := dict }}
{{- if hasKey $paths "tls.cert" }}
{{- $tls = dict "cert" (index $paths "tls.cert") "key" (index $paths "tls.key") "ca" (index $paths "tls.ca") }}
{{- with $v.tls.clientAuth }}{{ $_ := set $tls "client_auth" . }}{{ end }}
{{- with $v.tls.serverName }}{{ $_ := set $tls "server_name" . }}{{ end }}
{{- with index $paths "tls.crl" }}{{ $_ := set $tls "crl" . }}{{ end }}
{{- end }}
{{- /* How often the gRPC certificates (and the web UI's) are looked at for a rotation. */}}
{{- if and $v.tls.reloadInterval (or (hasKey $paths "tls.cert") (hasKey $paths "web.cert")) }}
{{- $_ := set $tls "reload_interval" $v.tls.reloadInterval }}
{{- end }}
{{- with $tls }}{{ $_ := set $cfg "tls" . }}{{ end }}
{{- if has $role (list "scheduler" "metadata-api" "schema") }}
{{- $_ := set $cfg "metadata_store" (include "spiderduck.metadataStore" .) }}
{{- end }}
{{- if or (eq $role "scheduler") (and (eq $role "metadata-api") (include "spiderduck.apiReadsContent" .ctx)) }}
{{- $_ := set $cfg "content_store" (include "spiderduck.contentStore" .) }}
{{- end }}
{{- if eq $role "scheduler" }}
{{- /* The schedulers sweep what retention lets go (src/spiderduck/stores/retention.py). */}}
{{- $keep := $v.retention }}
{{- $_ := set $cfg "retention" (dict "metadata" (toString $keep.metadata) "content" (toString $keep.content) "sweep_interval" (toString $keep.sweepInterval)) }}
{{- end }}
{{- if eq $role "fetcher" }}
{{- $_ := set $cfg "robots_cache" (include "spiderduck.robotsCache" .) }}
{{- $_ := set $cfg "fetcher" (dict "listen" (printf "0.0.0.0:%v" $v.fetcher.port)) }}
{{- end }}
{{- if and $v.render.enabled (has $role (list "fetcher" "scheduler")) }}
{{- /* The fetchers render; the schedulers ask them to for page hops and wait timeout more. */}}
{{- $render := dict "enabled" true "timeout" (toString $v.render.timeout) }}
{{- if eq $role "fetcher" }}
{{- $_ := set $render "max_concurrent" (int $v.render.maxConcurrent) }}
{{- $_ := set $render "max_pages_per_browser" (int $v.render.maxPagesPerBrowser) }}
{{- $_ := set $render "max_memory_mb" (int $v.render.maxMemoryMb) }}
{{- $_ := set $render "subresource_rate" (float64 $v.render.subresourceRate) }}
{{- $_ := set $render "isolation" $v.render.isolation }}
{{- end }}
{{- $_ := set $cfg "render" $render }}
{{- end }}
{{- if eq $role "metadata-api" }}
{{- $api := dict "listen" (printf "0.0.0.0:%v" $v.metadataApi.port) "explain_workers" (int (include "spiderduck.explainWorkers" .ctx)) }}
{{- with index $paths "api.tokens" }}{{ $_ := set $api "tokens_file" . }}{{ end }}
{{- with index $paths "api.adminTokens" }}{{ $_ := set $api "admin_tokens_file" . }}{{ end }}
{{- with $v.metadataApi.adminCallers }}{{ $_ := set $api "admin_callers" . }}{{ end }}
{{- $_ := set $cfg "metadata_api" $api }}
{{- $web := dict "listen" (ternary (printf "0.0.0.0:%v" $v.web.port) "" $v.web.enabled) }}
{{- with index $paths "web.cert" }}{{ $_ := set $web "tls_cert" . }}{{ end }}
{{- with index $paths "web.key" }}{{ $_ := set $web "tls_key" . }}{{ end }}
{{- if and $v.web.enabled $v.web.allowedHosts }}{{ $_ := set $web "allowed_hosts" $v.web.allowedHosts }}{{ end }}
{{- $_ := set $cfg "web" $web }}
{{- if $v.web.enabled }}
{{- /* The web UI's admin client asks every fetcher (each domain has one owner): their pods' names. */}}
{{- $_ := set $cfg "scheduler" (dict "fetchers" (include "spiderduck.fetcherAddresses" .ctx | fromYamlArray)) }}
{{- end }}
{{- end }}
{{- if and (kindIs "map" $v.config.web) (hasKey (default dict $v.config.web) "admin_token") }}
{{- fail "config.web.admin_token would put the web UI's admin token in a ConfigMap: create a Secret and set web.adminToken.existingSecret (and web.adminToken.key) instead" }}
{{- end }}
{{- $_ := mustMergeOverwrite $cfg (deepCopy $v.config) }}
{{- if and (eq $role "metadata-api") (not (include "spiderduck.apiReadsContent" .ctx)) }}
{{- /* A config.content_store it does not read (file://: another pod's emptyDir) is left out. */}}
{{- $_ := unset $cfg "content_store" }}
{{- end }}
{{- toYaml $cfg }}
{{- end }}

{{/* Pod-level settings shared by every pod. */}}
{{- define "spiderduck.podCommon" -}}
serviceAccountName: {{ include "spiderduck.serviceAccountName" . }}
automountServiceAccountToken: false
enableServiceLinks: false
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- range . }}
  - name: {{ . }}
  {{- end }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- end }}

{{/* Volumes of a role's pods, (dict "ctx" $ "role" R): its config, /tmp, the data dir and the
     files of spiderduck.files. */}}
{{- define "spiderduck.volumes" -}}
- name: config
  configMap:
    name: {{ include "spiderduck.roleName" . }}-config
{{- $render := and (eq .role "fetcher") .ctx.Values.render.enabled }}
- name: tmp
  emptyDir:
    {{- with ternary .ctx.Values.render.tmpSizeLimit .ctx.Values.volumes.tmpSizeLimit $render }}
    sizeLimit: {{ . }}
    {{- end }}
{{- if $render }}
- name: dshm
  emptyDir:
    medium: Memory
    {{- with .ctx.Values.render.shmSizeLimit }}
    sizeLimit: {{ . }}
    {{- end }}
{{- end }}
- name: data
  emptyDir:
    {{- with .ctx.Values.volumes.dataSizeLimit }}
    sizeLimit: {{ . }}
    {{- end }}
{{- range (include "spiderduck.files" . | fromYaml).mounts }}
- name: {{ .name }}
  {{- if .secret }}
  secret:
    secretName: {{ .secret }}
  {{- else }}
  configMap:
    name: {{ .configMap }}
  {{- end }}
    defaultMode: {{ include "spiderduck.fileMode" $.ctx }}
    items:
      {{- toYaml .items | nindent 6 }}
{{- end }}
{{- end }}

{{/* Mode of the files mounted from Secrets and ConfigMaps: 0440 (288), readable by the pods'
     fsGroup, which the kubelet makes their group; the processes run as a non-root user, so
     without fsGroup they could not read a file mounted owner-only. */}}
{{- define "spiderduck.fileMode" -}}
{{- if not .Values.podSecurityContext.fsGroup }}
{{- fail "podSecurityContext.fsGroup is needed: the chart mounts Secret files with mode 0440 for that group (the pods run as a non-root user)" }}
{{- end }}
{{- 288 }}
{{- end }}

{{- define "spiderduck.volumeMounts" -}}
- name: config
  mountPath: /etc/spiderduck
  readOnly: true
- name: tmp
  mountPath: /tmp
{{- if and (eq .role "fetcher") .ctx.Values.render.enabled }}
- name: dshm
  mountPath: /dev/shm
{{- end }}
- name: data
  mountPath: {{ .ctx.Values.dataDir }}
{{- range (include "spiderduck.files" . | fromYaml).mounts }}
- name: {{ .name }}
  mountPath: {{ .dir }}
  readOnly: true
{{- end }}
{{- end }}

{{/* Container settings shared by every role: (dict "ctx" $ "role" "fetcher" "port" 50052). */}}
{{- define "spiderduck.containerCommon" -}}
{{- $ctx := .ctx -}}
image: {{ include "spiderduck.roleImage" . }}
imagePullPolicy: {{ $ctx.Values.image.pullPolicy }}
args:
  - {{ .role }}
  - --config
  - /etc/spiderduck/config.yaml
securityContext:
  {{- toYaml $ctx.Values.securityContext | nindent 2 }}
volumeMounts:
  {{- include "spiderduck.volumeMounts" . | nindent 2 }}
{{- with $ctx.Values.extraEnvFrom }}
envFrom:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* Environment shared by every role. */}}
{{- define "spiderduck.env" -}}
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: SPIDERDUCK_DATA_DIR
  value: {{ .Values.dataDir | quote }}
- name: HOME
  value: /tmp
{{- if .Values.serviceMonitor.enabled }}
- name: SPIDERDUCK_METRICS_LISTEN
  value: {{ printf "0.0.0.0:%v" .Values.serviceMonitor.port | quote }}
{{- end }}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Ports and probes of a role: (dict "ctx" $ "role" R "port" 50052), with "web" true for the
     role serving the web UI (the metadata API). */}}
{{- define "spiderduck.portsAndProbes" -}}
{{- $p := .ctx.Values.probes -}}
ports:
  - name: grpc
    containerPort: {{ .port }}
    protocol: TCP
  {{- if and .web .ctx.Values.web.enabled }}
  - name: web
    containerPort: {{ .ctx.Values.web.port }}
    protocol: TCP
  {{- end }}
  {{- if .ctx.Values.serviceMonitor.enabled }}
  - name: metrics
    containerPort: {{ .ctx.Values.serviceMonitor.port }}
    protocol: TCP
  {{- end }}
livenessProbe:
  {{- include "spiderduck.probeCheck" . | trim | nindent 2 }}
  initialDelaySeconds: {{ $p.liveness.initialDelaySeconds }}
  periodSeconds: {{ $p.liveness.periodSeconds }}
  timeoutSeconds: {{ $p.liveness.timeoutSeconds }}
  failureThreshold: {{ $p.liveness.failureThreshold }}
readinessProbe:
  {{- include "spiderduck.probeCheck" . | trim | nindent 2 }}
  initialDelaySeconds: {{ $p.readiness.initialDelaySeconds }}
  periodSeconds: {{ $p.readiness.periodSeconds }}
  timeoutSeconds: {{ $p.readiness.timeoutSeconds }}
  failureThreshold: {{ $p.readiness.failureThreshold }}
{{- end }}

{{/* The check of a role's probes, (dict "ctx" $ "role" R "port" P): Kubernetes' native gRPC
     probe (grpc.health.v1) on plaintext; with TLS on (spiderduck.tlsOn) the kubelet cannot
     speak it, so `spiderduck health` dials the port with the role's own tls settings (its
     certificate as the client's, tls.ca) and verifies the server as the name the certificate
     carries. */}}
{{- define "spiderduck.probeCheck" -}}
{{- if include "spiderduck.tlsOn" .ctx }}
exec:
  command:
    - spiderduck
    - health
    - --address
    - 127.0.0.1:{{ .port }}
    - --config
    - /etc/spiderduck/config.yaml
    - --set
    - tls.server_name={{ include "spiderduck.tlsServerName" . }}
{{- else }}
grpc:
  port: {{ .port }}
{{- end }}
{{- end }}

{{/* The name a role's certificate is verified as by its probes: tls.serverName, else the
     role's Service name <fullname>-<role>.<namespace>.svc (the schedulers have no Service of
     their own; the name is only what their certificate must carry). */}}
{{- define "spiderduck.tlsServerName" -}}
{{- .ctx.Values.tls.serverName | default (printf "%s.%s.svc" (include "spiderduck.roleName" .) .ctx.Release.Namespace) }}
{{- end }}

{{/* Scheduling constraints of a role: the role's values. */}}
{{- define "spiderduck.scheduling" -}}
{{- with .nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* topologySpreadConstraints of a role's pods: (dict "ctx" $ "role" "fetcher" "constraints" list).
     A constraint without a labelSelector selects the role's own pods. */}}
{{- define "spiderduck.topologySpread" -}}
{{- $out := list }}
{{- range .constraints }}
{{- $c := deepCopy . }}
{{- if not (hasKey $c "labelSelector") }}
{{- $_ := set $c "labelSelector" (dict "matchLabels" (include "spiderduck.roleSelectorLabels" (dict "ctx" $.ctx "role" $.role) | fromYaml)) }}
{{- end }}
{{- $out = append $out $c }}
{{- end }}
{{- with $out }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* "true" when a listen address ("host:port", "[v6]:port") is reachable beyond the pod's
     loopback: any host but localhost and 127.x / ::1; "" for an empty listen (off). The chart's
     counterpart of cli.logs.beyond_loopback. */}}
{{- define "spiderduck.beyondLoopback" -}}
{{- if . }}
{{- $host := regexReplaceAll ":[^:]*$" . "" | trimPrefix "[" | trimSuffix "]" | lower }}
{{- if not (or (eq $host "localhost") (eq $host "::1") (regexMatch "^127\\.[0-9.]+$" $host)) }}true{{ end }}
{{- end }}
{{- end }}

{{/* NetworkPolicyPeers from {cidrs, namespaceSelector, podSelector}; empty when none is set. */}}
{{- define "spiderduck.peers" -}}
{{- range .cidrs }}
- ipBlock:
    cidr: {{ . }}
{{- end }}
{{- if or .namespaceSelector .podSelector }}
{{- $peer := dict }}
{{- with .namespaceSelector }}{{ $_ := set $peer "namespaceSelector" . }}{{ end }}
{{- with .podSelector }}{{ $_ := set $peer "podSelector" . }}{{ end }}
{{- toYaml (list $peer) | nindent 0 }}
{{- end }}
{{- end }}

{{/* Egress rule to the cluster DNS. */}}
{{- define "spiderduck.dnsEgress" -}}
- to:
    {{- include "spiderduck.peers" .Values.networkPolicy.dns | nindent 4 }}
  ports:
    - protocol: UDP
      port: 53
    - protocol: TCP
      port: 53
{{- end }}

{{/* Egress rule to NATS; fails when no destination is set (that would open the port to all). */}}
{{- define "spiderduck.natsEgress" -}}
{{- $peers := include "spiderduck.peers" .Values.networkPolicy.nats }}
{{- if not (trim $peers) }}
{{- fail "networkPolicy.nats: set cidrs or namespaceSelector/podSelector to where NATS runs" }}
{{- end }}
- to:
    {{- $peers | nindent 4 }}
  ports:
    - protocol: TCP
      port: {{ .Values.networkPolicy.nats.port }}
{{- end }}

{{/* Egress rule to the WebHDFS namenode and datanodes (networkPolicy.hdfs), from the roles
     whose config names an HDFS content store: the schedulers, and the metadata API when it
     reads it (spiderduck.apiReadsContent). */}}
{{- define "spiderduck.hdfsEgress" -}}
{{- $np := .Values.networkPolicy }}
{{- $hdfs := include "spiderduck.peers" $np.hdfs }}
- ports:
    {{- range $np.hdfs.ports }}
    - protocol: TCP
      port: {{ . }}
    {{- end }}
  {{- if trim $hdfs }}
  to:
    {{- $hdfs | nindent 4 }}
  {{- end }}
{{- end }}

{{/* Ingress rule letting Prometheus scrape the metrics port. */}}
{{- define "spiderduck.metricsIngress" -}}
{{- if .Values.serviceMonitor.enabled }}
- from:
    - namespaceSelector:
        {{- toYaml .Values.serviceMonitor.prometheusNamespaceSelector | nindent 8 }}
  ports:
    - protocol: TCP
      port: {{ .Values.serviceMonitor.port }}
{{- end }}
{{- end }}

{{/* A PodDisruptionBudget spec body from a role's pdb values. */}}
{{- define "spiderduck.pdbSpec" -}}
{{- if and (not (kindIs "invalid" .minAvailable)) (ne (toString .minAvailable) "") (not (kindIs "invalid" .maxUnavailable)) (ne (toString .maxUnavailable) "") }}
{{- fail "pdb: set minAvailable or maxUnavailable, not both" }}
{{- end }}
{{- if and (not (kindIs "invalid" .minAvailable)) (ne (toString .minAvailable) "") }}
minAvailable: {{ .minAvailable }}
{{- else }}
maxUnavailable: {{ default 1 .maxUnavailable }}
{{- end }}
{{- end }}
