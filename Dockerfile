# syntax=docker/dockerfile:1
# SpiderDuck image: one image for every role (`spiderduck fetcher|scheduler|metadata-api|...`).
#
#   docker build -t spiderduck:0.1.0 .
#   docker run --rm --read-only --tmpfs /tmp -v sd-data:/var/lib/spiderduck spiderduck:0.1.0 up
#
# The -render variant adds Debian's chromium, for fetchers that render JavaScript shells
# (config render.enabled; the chart's render.enabled runs it in the fetcher pods only):
#
#   docker build --build-arg RENDER=1 -t spiderduck:0.1.0-render .
#
# It costs about 694 MiB installed (195 MiB of .debs): chromium 283 MiB, chromium-common 65 MiB
# and 163 libraries python:3.11-slim lacks (LLVM for Mesa 112 MiB, ICU 35 MiB, GTK 3, X11,
# fonts...), measured on Debian bookworm with `apt-get install --dry-run --no-install-recommends
# chromium` against a dpkg status holding only the slim image's packages, summing the
# Installed-Size of each package it would add. That is several times the plain image, for a
# browser no other role starts: hence a variant, not the default.
#
# Stage 1 builds wheels of exactly the versions pinned in requirements.lock (every runtime
# dependency, transitively, each with its sha256 hashes, so pip refuses anything else) plus the
# project's two wheels; compilers live only here. Stage 2 installs those wheels, and nothing else,
# into a slim runtime that runs as uid 10001 and works with a read-only root filesystem (/tmp and the
# data dir are the only writable paths; in Kubernetes they are emptyDir volumes).
#
# requirements.lock is generated from pyproject.toml's [project].dependencies (Python 3.11):
#   pip-compile --generate-hashes --allow-unsafe --strip-extras --no-emit-index-url \
#               --no-emit-find-links --output-file requirements.lock pyproject.toml
# and tests/helm/test_chart_image.py fails when a dependency of pyproject.toml is missing from it.
# Only what the service runs with: code generators (grpcio-tools), test runners, profilers and
# type checkers are the test extra's (the dev venv's, bin/_venv.sh), never the lock's or the image's.

ARG PYTHON_IMAGE=python:3.11-slim

FROM ${PYTHON_IMAGE} AS builder
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
# Only needed when a dependency has no wheel for this platform (then pip compiles it).
RUN apt-get update \
    && apt-get install -y --no-install-recommends build-essential \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Dependencies first, so a source change does not rebuild them: the lock's pins, hash-checked
# (the hashes put pip in --require-hashes mode), built into wheels.
COPY requirements.lock ./
RUN mkdir -p /wheels \
    && pip wheel --require-hashes -r requirements.lock -w /wheels
# Then the project itself, as its two wheels: spiderduck-client (spiderduck/client/ and
# spiderduck/v1/, from clients/python) and the service, which depends on it; every other
# dependency is one of the locked wheels above.
COPY . .
RUN pip wheel ./clients/python --no-deps --no-cache-dir -w /wheels \
    && pip wheel . --no-deps --no-cache-dir -w /wheels

FROM ${PYTHON_IMAGE} AS runtime
# 1 = the -render variant: Debian's chromium (on PATH, where config render.chromium "" looks),
# without recommends; 0 (default) = no browser and no apt-get at all.
ARG RENDER=0
LABEL org.opencontainers.image.title="spiderduck" \
      org.opencontainers.image.description="Real-time URL resolution service"
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HOME=/tmp \
    TMPDIR=/tmp \
    SPIDERDUCK_DATA_DIR=/var/lib/spiderduck
RUN if [ "$RENDER" = 1 ]; then \
        apt-get update \
        && apt-get install -y --no-install-recommends chromium \
        && rm -rf /var/lib/apt/lists/* \
        && chromium --version; \
    elif [ "$RENDER" != 0 ]; then \
        echo "RENDER must be 0 or 1, not $RENDER" >&2; exit 1; \
    fi
# Install the builder's wheels, exactly the locked set plus spiderduck (no index, no resolver,
# no compiler here), then check that every dependency is met; the bind mount keeps the wheels
# out of the image's layers.
RUN --mount=type=bind,from=builder,source=/wheels,target=/wheels \
    pip install --no-index --no-deps /wheels/*.whl \
    && pip check \
    && groupadd --system --gid 10001 spiderduck \
    && useradd --system --uid 10001 --gid 10001 --home-dir /tmp --no-create-home \
               --shell /usr/sbin/nologin spiderduck \
    && mkdir -p /var/lib/spiderduck /etc/spiderduck \
    && chown 10001:10001 /var/lib/spiderduck
WORKDIR /var/lib/spiderduck
USER 10001:10001
# 50051 metadata-api gRPC, 50052 fetcher gRPC, 50053 scheduler health gRPC (grpc.health.v1
# on all three), 8080 the web UI (HTTP, metadata-api and `up`; config web.listen), 9090
# Prometheus /metrics of every role (config metrics_listen).
EXPOSE 50051 50052 50053 8080 9090
VOLUME ["/var/lib/spiderduck"]
ENTRYPOINT ["spiderduck"]
CMD ["--help"]
