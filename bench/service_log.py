"""What a benchmarked service wrote to its stderr (a file: bench/pipeline_bench.start_service)."""
from __future__ import annotations


def service_log(service, tail: int = 2000) -> str:
    with open(service.log_path, "rb") as log:
        return log.read().decode("utf-8", "replace")[-tail:]


def log_counts(service) -> str:
    """How many lines the service logged at WARNING and at ERROR or worse (its stderr)."""
    text = service_log(service, tail=1 << 30)
    warnings = sum(" WARNING " in line or line.startswith("WARNING") for line in text.splitlines())
    errors = sum(any(w in line for w in (" ERROR ", " CRITICAL ", "Traceback")) for line in text.splitlines())
    return f"{warnings} warnings, {errors} errors"
