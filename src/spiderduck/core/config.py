"""Loading the settings (src/spiderduck/core/settings.py: every key, its default and its words).

Sources, lowest precedence first: the defaults < the YAML file (`--config F`)
< environment (`SPIDERDUCK_` + key path in capitals joined by `__`, e.g.
`SPIDERDUCK_FETCHER__DEFAULT_RATE=5`) < command-line flags (`--set key.path=value`).
Values from the environment and flags are read as YAML scalars, so numbers,
booleans, lists and maps work (`SPIDERDUCK_FETCHER__ALLOWED_NETWORKS='[127.0.0.0/8]'`);
a text key takes its value as written (a token `0123` stays `0123`).
Every name of src/spiderduck/core/settings.py is importable from here too.
"""
from __future__ import annotations

import dataclasses
import os
import re
import typing
from typing import Annotated, Any, Mapping, Sequence

import yaml

from spiderduck.core.errors import ConfigError
from spiderduck.core.settings import (   # noqa: F401  (re-exported: importers use spiderduck.core.config)
    CLIENT_AUTH, DEFAULT_EMBED_HOSTS, DURATION, HTML_PARSERS, MAX_EMBED_HOSTS, REMOVED_KEYS,
    Duration, FetcherSettings, MetadataApiSettings, ProcessSettings, RenderSettings, SchedulerSettings,
    Settings, StreamSettings, TlsSettings, WebSettings)

ENV_PREFIX = "SPIDERDUCK_"


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)?\s*$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, None: 1}


def parse_duration(value: Any) -> float:
    """Seconds from a number or a string like '7d', '90s', '250ms'."""
    if isinstance(value, bool):
        raise ConfigError(f"not a duration: {value!r}")
    if isinstance(value, (int, float)):
        return float(value)
    m = _DURATION.match(str(value))
    if not m:
        raise ConfigError(f"not a duration: {value!r} (use e.g. 7d, 12h, 30m, 45s)")
    return float(m.group(1)) * _UNIT_SECONDS[m.group(2)]


def _coerce(cls: type, path: str, raw: Mapping[str, Any]) -> Any:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{path.rstrip('.') or 'config'}: expected a mapping, got {raw!r}")
    hints = typing.get_type_hints(cls, include_extras=True)
    known = {f.name: f for f in dataclasses.fields(cls)}
    kwargs = {}
    for key, value in raw.items():
        if key not in known:
            if f"{path}{key}" in REMOVED_KEYS:
                raise ConfigError(f"{path}{key}: {REMOVED_KEYS[f'{path}{key}']}")
            raise ConfigError(f"unknown config key: {path}{key}")
        hint = hints[key]
        if dataclasses.is_dataclass(hint):
            kwargs[key] = _coerce(hint, f"{path}{key}.", value or {})
        else:
            kwargs[key] = _scalar(hint, f"{path}{key}", value)
    return cls(**kwargs)


_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def is_duration(hint: Any) -> bool:
    """Whether a field's type hint (with extras) is Duration."""
    return typing.get_origin(hint) is Annotated and DURATION in hint.__metadata__


def _scalar(hint: Any, name: str, value: Any) -> Any:
    try:
        if is_duration(hint):
            try:
                seconds = parse_duration(value)
            except ConfigError as exc:
                raise ConfigError(f"{name}: {exc}") from exc
            return _amount(name, seconds)
        origin = typing.get_origin(hint)
        if origin is list:
            if value is None:
                return []
            if isinstance(value, str):
                value = [v.strip() for v in value.split(",") if v.strip()]
            return [str(v) for v in value]
        if origin is dict:
            if value is None:
                return {}
            if not isinstance(value, Mapping):
                raise ConfigError(f"{name}: expected a mapping, got {value!r}")
            vtype = typing.get_args(hint)[1]
            if vtype in (int, float):
                return {str(k): _amount(f"{name}.{k}", vtype(v)) for k, v in value.items()}
            return {str(k): vtype(v) for k, v in value.items()}
        if hint is bool:
            if isinstance(value, bool):
                return value
            word = str(value).strip().lower()
            if word not in _TRUE + _FALSE:
                raise ConfigError(f"{name}: bad value {value!r}: expected true or false")
            return word in _TRUE
        if hint in (int, float):
            if isinstance(value, bool):
                raise ValueError("expected a number, not a boolean")
            return _amount(name, hint(value))
        if isinstance(value, bool):     # YAML 1.1 reads an unquoted off/on (no/yes) as a boolean:
            return "on" if value else "off"     # a text key means the word (process.honesty: off)
        return "" if value is None else str(value)
    except (TypeError, ValueError, OverflowError) as exc:   # OverflowError: int(inf)
        raise ConfigError(f"{name}: bad value {value!r}: {exc}") from exc


def _amount(name: str, number: float) -> float:
    """A count, size, rate or duration: finite and not negative."""
    if not (number >= 0 and number != float("inf")):
        raise ConfigError(f"{name}: bad value {number!r}: must be a finite number, not negative")
    return number


def _set_path(tree: dict, path: list[str], value: Any) -> None:
    node = tree
    for part in path[:-1]:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise ConfigError(f"cannot set {'.'.join(path)}: {part} is not a mapping")
    node[path[-1]] = value


def _field_paths(cls: type, prefix: tuple[str, ...] = ()) -> dict[str, tuple[str, ...]]:
    """ENV_NAME -> key path, for every leaf key."""
    out = {}
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        path = prefix + (f.name,)
        if dataclasses.is_dataclass(hints[f.name]):
            out.update(_field_paths(hints[f.name], path))
        else:
            out[ENV_PREFIX + "__".join(p.upper() for p in path)] = path
    return out


def load(path: str | None = None, env: Mapping[str, str] | None = None,
         overrides: Mapping[str, Any] | None = None) -> Settings:
    """Build Settings from defaults < file < environment < overrides ({"a.b": value})."""
    tree: dict[str, Any] = {}
    if path:
        try:
            with open(path, encoding="utf-8") as fh:
                loaded = yaml.safe_load(fh) or {}
        except OSError as exc:
            raise ConfigError(f"cannot read config {path}: {exc.strerror}") from exc
        except yaml.YAMLError as exc:
            # Only where, never PyYAML's words: they quote the text it could not read, which
            # may be a secret (an unquoted token starting with ! or * reads as a tag or alias).
            mark = getattr(exc, "problem_mark", None)
            where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
            raise ConfigError(f"config {path} is not valid YAML{where}; a value starting with "
                              "!, *, &, @, `, {, [, | or > must be quoted") from None
        if not isinstance(loaded, dict):
            raise ConfigError(f"config {path}: expected a mapping at the top")
        tree = loaded
    env = os.environ if env is None else env
    paths = _field_paths(Settings)
    for name, value in env.items():
        if name in paths:
            _set_path(tree, list(paths[name]), _text_value(paths[name], value))
    for key, value in (overrides or {}).items():
        path = key.split(".")
        _set_path(tree, path, _text_value(path, value) if isinstance(value, str) else value)
    return _coerce(Settings, "", tree)


def _leaf_hint(path: Sequence[str]) -> Any:
    """The type hint of the key at `path` (None when there is no such key)."""
    hint: Any = Settings
    for part in path:
        if not dataclasses.is_dataclass(hint):
            return None
        hint = typing.get_type_hints(hint, include_extras=True).get(part)
    return hint


def _text_value(path: Sequence[str], text: str) -> Any:
    """An environment or --set value: a text key takes it as it is (a token "0123" or
    "s3cr3t #2" stays that, where YAML would read 83 and "s3cr3t"); any other key reads it as a
    YAML scalar, so numbers, booleans, lists and maps work."""
    return text if _leaf_hint(path) is str else _yaml_scalar(text)


def _yaml_scalar(text: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def as_dict(settings: Settings) -> dict[str, Any]:
    return dataclasses.asdict(settings)
