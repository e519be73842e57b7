"""The vocabulary every part speaks: settings and their loader, the record, URLs, status,
errors, fetch results, redirects, freshness rules, back-off, telemetry, metrics. It imports no
library of the service."""
