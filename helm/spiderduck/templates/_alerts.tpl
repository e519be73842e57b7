{{/*
SpiderDuck's alerting rules, in ONE place: templates/prometheusrule.yaml renders them into the
PrometheusRule, and tests/helm/test_chart_alerts.py renders the same PrometheusRule and runs its
groups through `promtool check rules` and `promtool test rules`. Thresholds, windows, durations
and severities come from .Values.prometheusRule.alerts.

Every series is narrowed by the selector below: by default this release's targets, as a
ServiceMonitor labels them (namespace = the release's, job = the Service name, which starts with
"<fullname>-").
*/}}
{{- define "spiderduck.alertSelector" -}}
{{- with .Values.prometheusRule.seriesSelector }}
{{- . }}
{{- else }}
{{- printf "namespace=%q,job=~%q" .Release.Namespace (printf "%s-.+" (include "spiderduck.fullname" .)) }}
{{- end }}
{{- end }}

{{/* The rule groups, as the YAML list of a PrometheusRule's spec.groups (or a rules file). */}}
{{- define "spiderduck.alertGroups" -}}
{{- $a := .Values.prometheusRule.alerts }}
{{- $sel := include "spiderduck.alertSelector" . }}
{{- $extra := .Values.prometheusRule.additionalLabels }}
{{- $rules := list }}
{{- with $a.noEventsProcessed }}
{{- if .enabled }}
{{- $rules = append $rules (dict
  "alert" "SpiderDuckNoEventsProcessed"
  "expr" (printf "(sum(rate(spiderduck_scheduler_processed_total{%s}[%s])) or vector(0)) == 0" $sel .window)
  "for" (index . "for")
  "labels" (merge (dict "severity" .severity) $extra)
  "annotations" (dict
    "summary" "SpiderDuck processed no URL"
    "description" (printf "No scheduler announced a processed URL (spiderduck_scheduler_processed_total) in the last %s. Check the schedulers, NATS (stream SPIDERDUCK_URLS and its consumer) and the metrics scrape; on an install that is idle by design, turn this alert off (prometheusRule.alerts.noEventsProcessed.enabled)." .window))) }}
{{- end }}
{{- end }}
{{- with $a.deadLettersGrowing }}
{{- if .enabled }}
{{- $rules = append $rules (dict
  "alert" "SpiderDuckDeadLettersGrowing"
  "expr" (printf "sum(increase(spiderduck_scheduler_messages_total{outcome=\"dead_lettered\",%s}[%s])) > %v" $sel .window .threshold)
  "for" (index . "for")
  "labels" (merge (dict "severity" .severity) $extra)
  "annotations" (dict
    "summary" "SpiderDuck dead letters are growing"
    "description" (printf "{{ $value | humanize }} submitted URLs went to the dead-letter stream SPIDERDUCK_DEAD in the last %s (spiderduck_scheduler_messages_total{outcome=\"dead_lettered\"}): the schedulers gave up on them. Read the scheduler logs and the dead letters." .window))) }}
{{- end }}
{{- end }}
{{- with $a.domainHalted }}
{{- if .enabled }}
{{- $rules = append $rules (dict
  "alert" "SpiderDuckDomainHalted"
  "expr" (printf "sum(spiderduck_fetcher_domains{state=\"halted\",%s}) > %v" $sel .threshold)
  "for" (index . "for")
  "labels" (merge (dict "severity" .severity) $extra)
  "annotations" (dict
    "summary" "A domain is halted by the fetchers"
    "description" "{{ $value }} domain(s) halted after failing requests in a row (spiderduck_fetcher_domains{state=\"halted\"}); their URLs are not fetched until an operator resumes them (`spiderduck domains`, or the web UI's admin actions).")) }}
{{- end }}
{{- end }}
{{- with $a.fetcherShardsUnowned }}
{{- if .enabled }}
{{- $rules = append $rules (dict
  "alert" "SpiderDuckFetcherShardsUnowned"
  "expr" (printf "(sum(spiderduck_fetcher_shards_held{%s}) or vector(0)) < max(spiderduck_fetcher_shards{%s}) or sum(absent(spiderduck_fetcher_shards{%s}))" $sel $sel $sel)
  "for" (index . "for")
  "labels" (merge (dict "severity" .severity) $extra)
  "annotations" (dict
    "summary" "Fetcher shards have no owner"
    "description" "The fetchers hold fewer shards (spiderduck_fetcher_shards_held, summed) than fetcher.shards (spiderduck_fetcher_shards), or no fetcher reports its shards: URLs of the domains on unowned shards cannot be fetched. Check the fetcher pods and their shard leases in NATS (KV spiderduck_fetcher_leases).")) }}
{{- end }}
{{- end }}
{{- with $a.latencyHigh }}
{{- if .enabled }}
{{- $rules = append $rules (dict
  "alert" "SpiderDuckLatencyHigh"
  "expr" (printf "histogram_quantile(%v, sum by (le) (rate(spiderduck_scheduler_latency_seconds_bucket{%s}[%s]))) > %v" .quantile $sel .window .thresholdSeconds)
  "for" (index . "for")
  "labels" (merge (dict "severity" .severity) $extra)
  "annotations" (dict
    "summary" "SpiderDuck is slow to process URLs"
    "description" (printf "The %v quantile of submission-to-announcement latency (spiderduck_scheduler_latency_seconds) is {{ $value | humanizeDuration }}, above %vs. Look at the fetchers' queues (spiderduck_fetcher_queued), paused domains and the schedulers' CPU." .quantile .thresholdSeconds))) }}
{{- end }}
{{- end }}
{{- if $rules }}
- name: spiderduck
  rules:
    {{- toYaml $rules | nindent 4 }}
{{- end }}
{{- end }}
