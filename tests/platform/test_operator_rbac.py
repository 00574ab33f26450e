"""The Training Operator's RBAC is what its enabled controllers need, and no more.

The need is derived from upstream's own declarations (tests/data/upstream-rbac/: the
``+kubebuilder:rbac`` markers of each controller and of the certificate rotator), for
every set of enabled kinds and every gang setting, and compared permission by
permission (group, resource, verb) with what the install grants. The few places where
trainjobs grants less than a marker declares are listed in ``NARROWED`` with the
reason; a grant beyond the markers fails.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import DATA
from trainjobs.k8s.yamlio import load_all
from trainjobs.platform import API_VERSION, PLATFORM
from trainjobs.platform.training_operator import SCHEMES

RBAC_DATA = DATA / "upstream-rbac"
CONTROLLERS = {
    "tensorflow": "TFJob",
    "pytorch": "PyTorchJob",
    "xgboost": "XGBoostJob",
    "mpi": "MPIJob",
    "paddlepaddle": "PaddleJob",
    "jax": "JAXJob",
    "mxnet": "MXJob",
}
"""pkg/controller.v1/<folder> → the kind its controller reconciles."""
GANGS = {None: None, "volcano": "scheduling.volcano.sh", "my-coscheduler": "scheduling.x-k8s.io"}
"""--gang-scheduler-name values → the PodGroup API group that scheduler uses."""

Permission = tuple[str, str, str]
"""(API group, resource, verb)."""

_MARKER = re.compile(r'groups="?([^",]*)"?,resources=([^,]+),verbs=(\S+)')


def _markers(path: Path) -> set[Permission]:
    found: set[Permission] = set()
    for line in path.read_text().splitlines():
        match = _MARKER.search(line)
        assert match, f"{path.name}: not a marker line: {line}"
        group, resources, verbs = match.groups()
        for resource in resources.split(";"):
            found |= {(group, resource, verb) for verb in verbs.split(";")}
    return found


def _declared(version: str) -> dict[str, set[Permission]]:
    """kind (or ``cert``) → what upstream declares it needs."""
    folder = RBAC_DATA / f"training-operator-{version}"
    return {CONTROLLERS.get(p.stem, p.stem): _markers(p) for p in sorted(folder.glob("*.markers"))}


def _render(spec: dict[str, Any]) -> list[dict[str, Any]]:
    plugin = PLATFORM.by_kind("TrainingOperator")
    assert plugin is not None
    doc = {"apiVersion": API_VERSION, "kind": "TrainingOperator", "metadata": {"name": "to"}}
    return plugin.manifests(plugin.model.model_validate({**doc, "spec": spec}))


def _granted(objects: list[dict[str, Any]], kind: str) -> dict[Permission, tuple[str, ...]]:
    """Permission → the resourceNames it is limited to (empty: any object)."""
    grants: dict[Permission, tuple[str, ...]] = {}
    for obj in objects:
        if obj["kind"] != kind:
            continue
        for rule in obj["rules"]:
            names = tuple(rule.get("resourceNames", ()))
            for group, resource, verb in itertools.product(
                rule["apiGroups"], rule["resources"], rule["verbs"]
            ):
                grants[(group, resource, verb)] = names
    return grants


def _narrowed(declared: set[Permission], gang_group: str | None) -> set[Permission]:
    """What the markers declare but trainjobs deliberately does not grant cluster-wide."""
    writes = {"create", "delete", "patch", "update"}
    return {
        # PodGroups are watched whenever their CRD exists, but written only by the gang
        # scheduler the operator was started with (--gang-scheduler-name).
        *(
            (g, r, v)
            for g, r, v in declared
            if r == "podgroups" and v in writes and g != gang_group
        ),
        # The rotator's cache watches Secrets of the operator's namespace only: a Role.
        *((g, r, v) for g, r, v in declared if r == "secrets"),
    }


def _kind_sets(version: str) -> list[tuple[str, ...]]:
    kinds = [s.kind for s in SCHEMES[version]]
    return [c for n in range(1, len(kinds) + 1) for c in itertools.combinations(kinds, n)]


@pytest.mark.parametrize("version", ["v1.9.4", "v1.8.1"])
@pytest.mark.parametrize("gang", list(GANGS))
def test_cluster_role_is_what_the_enabled_controllers_declare(
    version: str, gang: str | None
) -> None:
    declared = _declared(version)
    assert set(declared) == {"cert", *(s.kind for s in SCHEMES[version])}
    for kinds in _kind_sets(version):
        spec: dict[str, Any] = {"version": version, "enabledSchemes": list(kinds)}
        if gang:
            spec["gangScheduler"] = gang
        objects = _render(spec)
        need = set().union(declared["cert"], *(declared[k] for k in kinds))
        granted = _granted(objects, "ClusterRole")
        assert set(granted) - need == set(), kinds
        assert set(granted) == need - _narrowed(need, GANGS[gang]), kinds
        # Updating webhook configurations: only the operator's own.
        for verb in ("get", "update"):
            key = ("admissionregistration.k8s.io", "validatingwebhookconfigurations", verb)
            assert granted[key] == ("validator.training-operator.kubeflow.org",)
        # Secrets: the certificate Secret's namespace only, writes to that Secret only.
        secrets = _granted(objects, "Role")
        assert secrets == {
            ("", "secrets", "list"): (),
            ("", "secrets", "watch"): (),
            ("", "secrets", "get"): ("training-operator-webhook-cert",),
            ("", "secrets", "update"): ("training-operator-webhook-cert",),
        }
        assert {p for p in need if p[1] == "secrets"} == set(secrets)


def test_tfjob_and_pytorchjob_only_get_no_exec_no_rbac_writes_no_cluster_secrets() -> None:
    """The issue's example: nothing MPIJob v1's launcher needs, no Secret cluster-wide."""
    objects = _render({"enabledSchemes": ["TFJob", "PyTorchJob"]})
    granted = _granted(objects, "ClusterRole")
    resources = {resource for _, resource, _ in granted}
    assert {"pods/exec", "roles", "rolebindings", "secrets", "configmaps"} & resources == set()
    assert {"serviceaccounts"} & resources == set()
    assert ("autoscaling", "horizontalpodautoscalers", "create") in granted
    roles = [o for o in objects if o["kind"] in {"Role", "RoleBinding"}]
    assert [(o["kind"], o["metadata"]["namespace"]) for o in roles] == [
        ("Role", "kubeflow"),
        ("RoleBinding", "kubeflow"),
    ]
    binding = roles[1]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": "training-operator",
    }
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "training-operator", "namespace": "kubeflow"}
    ]


@pytest.mark.parametrize("version", ["v1.9.4", "v1.8.1"])
def test_rbac_upstream_is_the_release_role_verbatim(version: str) -> None:
    (role,) = load_all((RBAC_DATA / f"training-operator-{version}" / "role.yaml").read_text())
    for enabled in (None, ["TFJob"]):
        spec: dict[str, Any] = {"version": version, "rbac": "upstream"}
        if enabled:
            spec["enabledSchemes"] = enabled
        objects = _render(spec)
        (ours,) = [o for o in objects if o["kind"] == "ClusterRole"]
        assert _granted([ours], "ClusterRole") == _granted([role], "ClusterRole")
        assert not [o for o in objects if o["kind"] == "Role"]


def test_release_role_is_the_union_of_the_markers() -> None:
    """The copied markers are the ones the release's role was generated from."""
    for version in ("v1.9.4", "v1.8.1"):
        (role,) = load_all((RBAC_DATA / f"training-operator-{version}" / "role.yaml").read_text())
        union = set().union(*_declared(version).values())
        assert set(_granted([role], "ClusterRole")) == union
