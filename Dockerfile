# syntax=docker/dockerfile:1
# SpiderDuck image: one image for every role (`spiderduck fetcher|scheduler|metadata-api|...`).
#
#   docker build -t spiderduck:0.1.0 .
#   docker run --rm --read-only --tmpfs /tmp -v sd-data:/var/lib/spiderduck spiderduck:0.1.0 up
#
# Stage 1 builds wheels for the project and every dependency (compilers live only here);
# stage 2 installs those wheels into a slim runtime that runs as uid 10001 and works with a
# read-only root filesystem (/tmp and the data dir are the only writable paths; in Kubernetes
# they are emptyDir volumes).

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
# Dependencies first, so a source change does not rebuild them: the dependency list of
# pyproject.toml is turned into a requirements file and built into wheels.
COPY pyproject.toml README.md ./
RUN mkdir -p /wheels \
    && python -c 'import tomllib; deps = tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]; open("/tmp/requirements.txt", "w").write("\n".join(deps) + "\n")'
RUN pip wheel -r /tmp/requirements.txt -w /wheels
# Then the project itself (plus any dependency not built yet).
COPY . .
RUN pip wheel . --find-links=/wheels -w /wheels

FROM ${PYTHON_IMAGE} AS runtime
LABEL org.opencontainers.image.title="spiderduck" \
      org.opencontainers.image.description="Real-time URL resolution service"
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HOME=/tmp \
    TMPDIR=/tmp \
    SPIDERDUCK_DATA_DIR=/var/lib/spiderduck
# Install from the builder's wheels only (no index, no compiler here); the bind mount keeps
# the wheels out of the image's layers.
RUN --mount=type=bind,from=builder,source=/wheels,target=/wheels \
    pip install --no-index --find-links=/wheels spiderduck \
    && groupadd --system --gid 10001 spiderduck \
    && useradd --system --uid 10001 --gid 10001 --home-dir /tmp --no-create-home \
               --shell /usr/sbin/nologin spiderduck \
    && mkdir -p /var/lib/spiderduck /etc/spiderduck \
    && chown 10001:10001 /var/lib/spiderduck
WORKDIR /var/lib/spiderduck
USER 10001:10001
# 50051 metadata-api gRPC, 50052 fetcher gRPC (health checking on both).
EXPOSE 50051 50052
VOLUME ["/var/lib/spiderduck"]
ENTRYPOINT ["spiderduck"]
CMD ["--help"]
