"""The metadata API's admins (issue 39: Forget, ListForgotten, Unforget): their tokens come from a
Secret mounted in the metadata-api pods only (metadataApi.adminTokens, as metadata_api.admin_tokens_file)
and their certificate identities from metadataApi.adminCallers (metadata_api.admin_callers), both
read back by the service's own loader; with neither, none is rendered (loopback only)."""
from __future__ import annotations

import pytest
import yaml

from support.chart import helm, mounted_files, render, role_config, secrets_used


def load(cfg: dict, tmp_path):
    from spiderduck.core import config as sd_config
    path = tmp_path / "api.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return sd_config.load(str(path), env={})


def test_admin_tokens_come_from_a_secret_mounted_in_the_metadata_api_only(tmp_path):
    docs = render({"metadataApi": {"adminTokens": {"existingSecret": "sd-admins", "key": "oncall"},
                                   "tokens": {"existingSecret": "sd-api-tokens"}}})
    cfg = role_config(docs, "metadata-api")
    path = cfg["metadata_api"]["admin_tokens_file"]
    assert mounted_files(docs, "metadata-api")[path] == ("secret", "sd-admins", "oncall")
    assert path != cfg["metadata_api"]["tokens_file"]
    assert load(cfg, tmp_path).metadata_api.admin_tokens_file == path
    for role in ("fetcher", "scheduler", "schema"):
        assert "sd-admins" not in secrets_used(docs, role), role


def test_admin_callers_render_as_metadata_api_admin_callers(tmp_path):
    docs = render({"metadataApi": {"adminCallers": ["ops", "oncall.example.com"]}})
    cfg = role_config(docs, "metadata-api")
    assert cfg["metadata_api"]["admin_callers"] == ["ops", "oncall.example.com"]
    assert load(cfg, tmp_path).metadata_api.admin_callers == ["ops", "oncall.example.com"]


def test_by_default_no_admin_is_rendered_so_only_loopback_may_forget(tmp_path):
    cfg = role_config(render(), "metadata-api")
    assert "admin_tokens_file" not in cfg["metadata_api"] and "admin_callers" not in cfg["metadata_api"]
    api = load(cfg, tmp_path).metadata_api
    assert api.admin_tokens_file == "" and api.admin_callers == []


@pytest.mark.parametrize("values, path", [
    ({"metadataApi": {"adminCallers": "ops"}}, "/metadataApi/adminCallers"),
    ({"metadataApi": {"adminCallers": [""]}}, "/metadataApi/adminCallers"),
    ({"metadataApi": {"adminTokens": {"secret": "x"}}}, "/metadataApi/adminTokens"),
])
def test_schema_refuses_bad_admin_values(values, path):
    with pytest.raises(helm.HelmError, match=path):
        render(values)
