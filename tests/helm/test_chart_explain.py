"""The metadata API reads the schedulers' content store (ExplainUrl, the web UI's explain page;
Forget erases from it, issue 39): with HDFS its config names the same content_store URL, its pods
mount the HDFS CA and its NetworkPolicy lets it reach the namenode and datanodes, whatever
metadataApi.explainWorkers says; with a file:// store (each pod's own emptyDir) it gets none of
them and explains from records alone.
Helm runs in-process through the `helm-python-sdk` wheel, as in test_chart.py."""
from __future__ import annotations

import pytest
import yaml

from support.chart import STORES, helm, mounted_files, notes, one, pod_spec, render, role_config

FILE_STORE = {"config": {"content_store": "file:///var/lib/spiderduck/warc"}}
HDFS_PEERS = {"cidrs": ["10.30.0.0/24"], "namespaceSelector": None, "podSelector": None}


def load(cfg: dict, tmp_path, name: str = "config.yaml"):
    """The settings the service's own loader makes of a rendered config.yaml."""
    from spiderduck.core import config as sd_config
    path = tmp_path / name
    path.write_text(yaml.safe_dump(cfg))
    return sd_config.load(str(path), env={"SPIDERDUCK_DATA_DIR": "/var/lib/spiderduck"})


def hdfs_rules(docs: list[dict], role: str) -> list[dict]:
    egress = one(docs, "NetworkPolicy", role)["spec"]["egress"]
    return [r for r in egress if {p["port"] for p in r.get("ports", [])} & {9870, 9864, 9871, 9865}]


def hdfs_volumes(docs: list[dict], role: str) -> list[str]:
    return [v["name"] for v in pod_spec(docs, role)["volumes"] if v["name"].startswith("hdfs")]


@pytest.fixture(scope="module")
def hdfs_docs() -> list[dict]:
    return render({**STORES, "networkPolicy": {"hdfs": {**HDFS_PEERS, "ports": [9871, 9865]}}})


def test_the_metadata_api_gets_the_schedulers_hdfs_content_store(hdfs_docs, tmp_path):
    api, scheduler = role_config(hdfs_docs, "metadata-api"), role_config(hdfs_docs, "scheduler")
    assert api["content_store"] == scheduler["content_store"]
    assert api["content_store"].startswith("hdfs+https://nn.internal:9871/warc?user=crawler&ca=")
    settings = load(api, tmp_path)
    assert settings.content_store_url == scheduler["content_store"]
    assert settings.metadata_api.explain_workers == 1


def test_the_metadata_api_pods_mount_the_hdfs_ca_its_url_names(hdfs_docs, tmp_path):
    import shutil

    from spiderduck.stores.hdfs_content import HdfsLocation
    from support.certs import TestCA
    url = role_config(hdfs_docs, "metadata-api")["content_store"]
    files = mounted_files(hdfs_docs, "metadata-api")
    ca = dict(kv.split("=", 1) for kv in url.partition("?")[2].split("&"))["ca"]
    assert files[ca] == ("secret", "hdfs-ca", "root.pem")
    # At the same path as in the schedulers' pods, so the two URLs are one.
    assert mounted_files(hdfs_docs, "scheduler")[ca] == files[ca]
    assert hdfs_volumes(hdfs_docs, "metadata-api") == hdfs_volumes(hdfs_docs, "scheduler") == ["hdfs-ca"]
    local = tmp_path / ca.lstrip("/")
    local.parent.mkdir(parents=True)
    shutil.copy(TestCA(tmp_path / "pki").ca, local)
    location = HdfsLocation.parse(url.replace("=/var/run/", f"={tmp_path}/var/run/"))
    assert location.https and location.ca == str(local) and location.user == "crawler"


def test_the_metadata_api_policy_reaches_hdfs_as_the_schedulers_does(hdfs_docs):
    (api,) = hdfs_rules(hdfs_docs, "metadata-api")
    (scheduler,) = hdfs_rules(hdfs_docs, "scheduler")
    assert api == scheduler
    assert api["ports"] == [{"protocol": "TCP", "port": 9871}, {"protocol": "TCP", "port": 9865}]
    assert api["to"] == [{"ipBlock": {"cidr": "10.30.0.0/24"}}]
    # The fetchers never reach it.
    assert not hdfs_rules(hdfs_docs, "fetcher")


def test_a_file_content_store_is_not_shared_so_the_metadata_api_explains_from_records(tmp_path):
    docs = render({**FILE_STORE, "hdfs": STORES["hdfs"]})
    api = role_config(docs, "metadata-api")
    assert "content_store" not in api
    assert api["metadata_api"]["explain_workers"] == 0
    settings = load(api, tmp_path)
    assert settings.metadata_api.explain_workers == 0
    # The schedulers keep the store config gives them.
    assert role_config(docs, "scheduler")["content_store"] == FILE_STORE["config"]["content_store"]
    assert not hdfs_volumes(docs, "metadata-api") and not hdfs_rules(docs, "metadata-api")
    # Whatever metadataApi.explainWorkers says: another pod's emptyDir has nothing to read.
    more = render({**FILE_STORE, "metadataApi": {"explainWorkers": 4}})
    assert role_config(more, "metadata-api")["metadata_api"]["explain_workers"] == 0
    assert "content_store" not in role_config(more, "metadata-api")
    assert "config sets embedded stores (content_store=file:" in notes(FILE_STORE)


def test_a_config_hdfs_content_store_is_shared():
    url = "hdfs://nn-2.internal:9870/other?user=crawler"
    docs = render({"config": {"content_store": url}})
    assert role_config(docs, "metadata-api")["content_store"] == url
    assert role_config(docs, "metadata-api")["metadata_api"]["explain_workers"] == 1
    assert hdfs_rules(docs, "metadata-api")


@pytest.mark.parametrize("workers", [0, 1, 4, 16])
def test_explain_workers_value_renders(workers, tmp_path):
    docs = render({**STORES, "metadataApi": {"explainWorkers": workers}})
    api = role_config(docs, "metadata-api")
    assert api["metadata_api"]["explain_workers"] == workers
    assert load(api, tmp_path).metadata_api.explain_workers == workers
    # 0 too: Forget erases from the store, so it gets the URL, the CA and the way to HDFS.
    assert "content_store" in api
    assert hdfs_volumes(docs, "metadata-api") and hdfs_rules(docs, "metadata-api")
    assert role_config(docs, "scheduler")["content_store"].startswith("hdfs+https://")


def test_config_metadata_api_explain_workers_merges_over_the_value():
    docs = render({"metadataApi": {"explainWorkers": 0},
                   "config": {"metadata_api": {"explain_workers": 2}}})
    api = role_config(docs, "metadata-api")
    assert api["metadata_api"]["explain_workers"] == 2 and api["content_store"].startswith("hdfs://")
    assert hdfs_rules(docs, "metadata-api")
    off = render({"config": {"metadata_api": {"explain_workers": 0}}})
    assert role_config(off, "metadata-api")["metadata_api"]["explain_workers"] == 0
    assert "content_store" in role_config(off, "metadata-api")     # Forget erases from it
    assert hdfs_rules(off, "metadata-api")


def test_a_content_store_change_rolls_the_metadata_api_only_while_it_reads_it():
    def checksum(docs):
        return one(docs, "Deployment", "metadata-api")["spec"]["template"]["metadata"]["annotations"]["checksum/config"]
    other = {"hdfs": {"user": "other"}}
    assert checksum(render()) != checksum(render(other))
    assert checksum(render({"metadataApi": {"explainWorkers": 0}})) != checksum(
        render({"metadataApi": {"explainWorkers": 0}, **other}))        # it reads it to forget
    files = {"config": {"content_store": "file:///var/lib/spiderduck/warc"}}
    moved = {"config": {"content_store": "file:///var/lib/spiderduck/other"}}
    assert checksum(render(files)) == checksum(render(moved))


@pytest.mark.parametrize("workers", [-1, 17, "2"])
def test_schema_refuses_explain_workers_out_of_range(workers):
    with pytest.raises(helm.HelmError, match="/metadataApi/explainWorkers"):
        render({"metadataApi": {"explainWorkers": workers}})
