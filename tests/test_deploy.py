"""deploy/: KubeRay manifests, the Serve config, the cluster launcher YAML and the Dockerfile."""

from __future__ import annotations

import importlib

import pytest
import yaml
from ray.serve.schema import ServeDeploySchema

from conftest import ROOT

KUBERAY = ROOT / "deploy" / "kuberay"


def load(name: str) -> dict:
    return yaml.safe_load((KUBERAY / name).read_text())


def check_pod_groups(cluster_spec: dict) -> None:
    assert cluster_spec["rayVersion"] == "2.60.0"
    head = cluster_spec["headGroupSpec"]["template"]["spec"]["containers"][0]
    assert head["image"].startswith("raygent:")
    assert cluster_spec["workerGroupSpecs"], "at least one worker group"
    for group in cluster_spec["workerGroupSpecs"]:
        assert group["groupName"] and group["minReplicas"] <= group["replicas"] <= group["maxReplicas"]
        assert group["template"]["spec"]["containers"][0]["image"].startswith("raygent:")


def check_serve_config(config: dict) -> None:
    schema = ServeDeploySchema.model_validate(config)
    for app in schema.applications:
        module, _, attr = app.import_path.partition(":")
        assert callable(getattr(importlib.import_module(module), attr)), app.import_path


def test_raycluster() -> None:
    manifest = load("raycluster.yaml")
    assert (manifest["apiVersion"], manifest["kind"]) == ("ray.io/v1", "RayCluster")
    check_pod_groups(manifest["spec"])


@pytest.mark.parametrize(
    ("name", "command"), [("rayjob-sweep.yaml", "raygent sweep"), ("rayjob-run.yaml", "raygent run")]
)
def test_rayjobs_run_raygent(name: str, command: str) -> None:
    manifest = load(name)
    assert (manifest["apiVersion"], manifest["kind"]) == ("ray.io/v1", "RayJob")
    assert manifest["spec"]["entrypoint"].startswith(command)
    check_pod_groups(manifest["spec"]["rayClusterSpec"])


def test_rayservice_serve_config_validates() -> None:
    manifest = load("rayservice.yaml")
    assert (manifest["apiVersion"], manifest["kind"]) == ("ray.io/v1", "RayService")
    check_pod_groups(manifest["spec"]["rayClusterConfig"])
    check_serve_config(yaml.safe_load(manifest["spec"]["serveConfigV2"]))


def test_serve_yaml_validates() -> None:
    check_serve_config(yaml.safe_load((ROOT / "deploy" / "serve.yaml").read_text()))


def test_cluster_launcher_yaml() -> None:
    config = yaml.safe_load((ROOT / "deploy" / "cluster.yaml").read_text())
    for key in ("cluster_name", "provider", "available_node_types", "head_node_type", "head_start_ray_commands"):
        assert key in config, key
    assert config["head_node_type"] in config["available_node_types"]
    assert config["docker"]["image"].startswith("raygent:")


def test_dockerfile_installs_raygent_on_ray_image() -> None:
    text = (ROOT / "deploy" / "Dockerfile").read_text()
    assert "FROM rayproject/ray:2.60.0" in text
    assert "pip install" in text and "raygent-*.whl" in text
