"""Operator installs are the upstream installs, object for object.

``tests/data/upstream-installs/`` holds what upstream's own kustomize overlays build
(see the README there). Each operator kind, with the options that mean "as
upstream", must render exactly those objects; the deviations trainjobs makes on
purpose are listed here, each with its reason, and nowhere else.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.paths import DATA
from trainjobs.k8s.crds import crd_dir, crd_files, load_crd
from trainjobs.k8s.images import KUBECTL_DELIVERY_IMAGE
from trainjobs.k8s.yamlio import load_all
from trainjobs.platform import API_VERSION, PLATFORM

UPSTREAM = DATA / "upstream-installs"
Key = tuple[str, str, str]


def _key(obj: dict[str, Any]) -> Key:
    return (obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"])


def _render(kind: str, spec: dict[str, Any], namespace: str | None = None) -> dict[Key, Any]:
    plugin = PLATFORM.by_kind(kind)
    assert plugin is not None
    meta = {"name": "op", **({"namespace": namespace} if namespace else {})}
    # Upstream's installs create their namespace; trainjobs does only when asked.
    spec = {"createNamespace": True, **spec}
    resource = plugin.model.model_validate(
        {"apiVersion": API_VERSION, "kind": kind, "metadata": meta, "spec": spec}
    )
    assert plugin.validate(resource) == [] or spec.get("rbac") == "upstream"
    return {_key(m): m for m in plugin.manifests(resource)}


def _upstream(name: str) -> dict[Key, Any]:
    return {_key(d): d for d in load_all((UPSTREAM / f"{name}.yaml").read_text())}


def _elide_crd_versions(objects: dict[Key, Any]) -> None:
    """The data files elide each CRD's (huge) versions; check those against crds/ instead."""
    for key, obj in objects.items():
        if key[0] == "CustomResourceDefinition":
            name = obj["metadata"]["name"]
            shipped = [load_crd(p) for p in _crd_paths() if load_crd(p)["metadata"]["name"] == name]
            assert obj["spec"]["versions"] in [c["spec"]["versions"] for c in shipped], name
            obj["spec"]["versions"] = "<elided: see crds/>"


def _crd_paths() -> list[str]:
    return [str(p.relative_to(crd_dir())) for p in crd_files()]


def _assert_same(ours: dict[Key, Any], upstream: dict[Key, Any]) -> None:
    _elide_crd_versions(ours)
    assert sorted(ours) == sorted(upstream)
    for key in upstream:
        assert ours[key] == upstream[key], key


def _drop_cert_manager_annotation(upstream: dict[Key, Any]) -> None:
    # Deviation: JobSet's CRD carries an unresolved kustomize variable in this
    # annotation; without cert-manager it does nothing, so trainjobs leaves it out.
    for key, obj in upstream.items():
        if key[0] == "CustomResourceDefinition":
            obj["metadata"]["annotations"].pop("cert-manager.io/inject-ca-from", None)


def _parse_config(objects: dict[Key, Any], key: Key) -> None:
    # Deviation: Trainer's controller configuration is written from typed data; the
    # text differs from upstream's file (licence header, comments), the content not.
    data = objects[key]["data"]
    data["controller_manager_config.yaml"] = load_all(data["controller_manager_config.yaml"])


def _pin_kubectl_delivery(upstream: dict[Key, Any]) -> None:
    # Deviation: with MPIJob v1 enabled, the operator is given the kubectl-delivery image
    # the pods target renders (its default is :latest, a moving target; k8s/images.py),
    # so the launcher it makes is the one trainjobs renders.
    (deployment,) = [obj for key, obj in upstream.items() if key[0] == "Deployment"]
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    container["args"] = [
        *container.get("args", []),
        f"--mpi-kubectl-delivery-image={KUBECTL_DELIVERY_IMAGE}",
    ]


@pytest.mark.parametrize("version", ["v1.9.4", "v1.8.1"])
def test_training_operator_is_the_standalone_overlay(version: str) -> None:
    upstream = _upstream(f"training-operator-{version}")
    _pin_kubectl_delivery(upstream)
    _assert_same(
        _render(
            "TrainingOperator", {"version": version, "rbac": "upstream", "podSecurity": "upstream"}
        ),
        upstream,
    )


def test_mpi_operator_with_upstream_rbac_is_the_release_manifest() -> None:
    # Deviation: the image is pinned to the v0.8.0 release by default; upstream's
    # release-0.8 manifest names the floating tag 0.8.
    ours = _render(
        "MPIOperator",
        {"rbac": "upstream", "podSecurity": "upstream", "image": "mpioperator/mpi-operator:0.8"},
    )
    _assert_same(ours, _upstream("mpi-operator-v0.8"))


def test_jobset_is_the_release_manifest() -> None:
    upstream = _upstream("jobset-v0.12.0")
    _drop_cert_manager_annotation(upstream)
    _assert_same(_render("JobSet", {}), upstream)


def test_trainer_is_the_manager_overlay_with_jobset() -> None:
    upstream = _upstream("trainer-v2.3.0")
    _drop_cert_manager_annotation(upstream)
    # The manager overlay alone; the runtimes overlay is checked below.
    ours = _render("Trainer", {"installRuntimes": False})
    key = ("ConfigMap", "kubeflow-system", "kubeflow-trainer-config")
    _parse_config(ours, key)
    _parse_config(upstream, key)
    _assert_same(ours, upstream)


def test_trainer_installs_the_runtimes_upstream_ships() -> None:
    # manifests/overlays/runtimes of v2.3.0: the ClusterTrainingRuntimes of
    # manifests/base/runtimes (copied byte for byte under tests/data/trainer-upstream).
    without = _render("Trainer", {"installRuntimes": False})
    ours = _render("Trainer", {})
    added = {k: v for k, v in ours.items() if k not in without}
    assert {k[0] for k in added} == {"ClusterTrainingRuntime"}
    names = sorted(k[2] for k in added)
    assert "torch-distributed" in names and "deepspeed-distributed" in names
    upstream_dir = UPSTREAM.parent / "trainer-upstream"
    shipped = [
        d
        for f in sorted(upstream_dir.glob("manifests_base_runtimes_*.yaml"))
        # The data-cache runtime sits beside them but is not in the runtimes overlay.
        if "data-cache" not in f.name
        for d in load_all(f.read_text())
        if d and d.get("kind") == "ClusterTrainingRuntime"
    ]
    assert sorted(d["metadata"]["name"] for d in shipped) == names
    for document in shipped:
        rendered = added[_key(document)]
        assert rendered["spec"]["mlPolicy"] == document["spec"]["mlPolicy"]
        assert (
            rendered["metadata"]["labels"]["trainer.kubeflow.org/framework"]
            == (document["metadata"]["labels"]["trainer.kubeflow.org/framework"])
        )
