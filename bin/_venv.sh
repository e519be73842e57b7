# Sourced by bin/spiderduck and bin/test: make sure .venv exists and matches pyproject.toml.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
STAMP="$VENV/.spiderduck-installed"
want="$(cat "$ROOT/pyproject.toml" "$ROOT/clients/python/pyproject.toml" | sha256sum | cut -d' ' -f1)"
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$want" ]; then
    echo "setting up $VENV ..." >&2
    PY="${PYTHON:-python3}"
    "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
        || { echo "SpiderDuck needs Python 3.11 or newer ($PY is older)" >&2; exit 2; }
    [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
    # The client first, from this checkout (spiderduck-client is never taken from an index), then
    # the service that depends on it; both editable, over the one src/spiderduck tree.
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e "$ROOT/clients/python" >&2 \
        || { echo "installing spiderduck-client into $VENV failed" >&2; exit 2; }
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e "$ROOT[test]" >&2 \
        || { echo "installing SpiderDuck into $VENV failed" >&2; exit 2; }
    echo "$want" > "$STAMP"
fi
