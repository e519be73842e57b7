# Sourced by bin/spiderduck and bin/test: make sure .venv exists and matches pyproject.toml.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
STAMP="$VENV/.spiderduck-installed"
want="$(sha256sum "$ROOT/pyproject.toml" | cut -d' ' -f1)"
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$want" ]; then
    echo "setting up $VENV ..." >&2
    PY="${PYTHON:-python3}"
    "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
        || { echo "SpiderDuck needs Python 3.11 or newer ($PY is older)" >&2; exit 2; }
    [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e "$ROOT[test]" >&2 \
        || { echo "installing SpiderDuck into $VENV failed" >&2; exit 2; }
    echo "$want" > "$STAMP"
fi
