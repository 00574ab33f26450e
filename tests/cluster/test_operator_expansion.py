"""Proof 2: the pods target is the operator's expansion, as the real operators make it.

For each kind, the example's custom resource goes to the real Training Operator v1.9.4
(TFJob, PyTorchJob and its elastic form, XGBoostJob, JAXJob, PaddleJob) or MPI Operator
v0.8.0 (MPIJob v2beta1); the Pods, Services (and for MPI the launcher Job, hostfile
ConfigMap and SSH Secret) it creates are read back and compared with
``render --target pods`` of the same job. Both sides are compared as the API server
stores them: our render goes through a server-side dry run first, so defaults and
admission are the same on both sides and every remaining difference is trainjobs'.
"""

from __future__ import annotations

import copy
import difflib
import json
from typing import Any

import pytest
import yaml

from tests.cluster.control_plane import ControlPlane
from tests.cluster.kube import apply, poll
from tests.support.paths import EXAMPLES
from trainjobs.check import run
from trainjobs.spec import parse_documents

pytestmark = pytest.mark.cluster

Manifest = dict[str, Any]

COMPARED_KINDS = ("Pod", "Service", "ConfigMap", "Secret", "Job")
"""Kinds of the pods target's output that an operator creates. Not compared: the
elastic PyTorchJob's HorizontalPodAutoscaler, which the pods target leaves out on
purpose (it would scale a PyTorchJob that does not exist; README, pods target)."""

LIST_PATHS = {
    "Pod": "/api/v1/namespaces/{ns}/pods",
    "Service": "/api/v1/namespaces/{ns}/services",
    "ConfigMap": "/api/v1/namespaces/{ns}/configmaps",
    "Secret": "/api/v1/namespaces/{ns}/secrets",
    "Job": "/apis/batch/v1/namespaces/{ns}/jobs",
}

EXPANSION_CASES = [
    "tf-mnist/tfjob.yaml",
    "pytorch-ddp/pytorchjob.yaml",
    "pytorch-elastic/pytorchjob.yaml",
    "xgboost-dist/xgboostjob.yaml",
    "jax-simple/jaxjob.yaml",
    "paddle-collective/paddlejob.yaml",
    "mpi-horovod-benchmarks/mpijob.yaml",
]

SERVER_METADATA = (
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "generation",
    "managedFields",
    "ownerReferences",
    "generateName",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)
JOB_UID_LABELS = ("controller-uid", "batch.kubernetes.io/controller-uid")


def _job_doc(relative: str, namespace: str) -> dict[str, Any]:
    (doc,) = [d for d in yaml.safe_load_all((EXAMPLES / relative).read_text()) if d]
    doc = copy.deepcopy(doc)
    doc["metadata"]["namespace"] = namespace
    doc.pop("trainjobs", None)
    return dict(doc)


def _render(doc: dict[str, Any], target: str) -> list[Manifest]:
    stack = parse_documents([copy.deepcopy(doc)], source="<expansion>")
    return list(run(stack, target=target).manifests)  # type: ignore[arg-type]


def _projection(obj: Manifest) -> Manifest:
    """The fields an operator's expansion decides, as stored; none the cluster assigns."""
    kind = obj["kind"]
    meta = {k: v for k, v in obj["metadata"].items() if k not in SERVER_METADATA}
    out: Manifest = {"kind": kind, "metadata": meta}
    if kind == "Pod":
        spec = dict(obj["spec"])
        spec.pop("nodeName", None)  # the scheduler's choice, not the expansion's
        out["spec"] = spec
    elif kind == "Service":
        spec = dict(obj["spec"])
        if spec.get("clusterIP") != "None":  # an allocated address
            spec.pop("clusterIP", None)
            spec.pop("clusterIPs", None)
        out["spec"] = spec
    elif kind == "Job":
        spec = copy.deepcopy(obj["spec"])
        # The job controller keys the selector by the Job's uid.
        spec.pop("selector", None)
        template_meta = spec["template"].setdefault("metadata", {})
        # The launcher's owner is the MPIJob, which the pods target does not have.
        template_meta.pop("ownerReferences", None)
        labels = template_meta.get("labels", {})
        for key in JOB_UID_LABELS:
            labels.pop(key, None)
            meta.get("labels", {}).pop(key, None)
        out["spec"] = spec
    elif kind == "ConfigMap":
        out["data"] = obj.get("data", {})
    elif kind == "Secret":
        # The operator generates a fresh SSH key; trainjobs a placeholder Pulumi fills.
        out["type"] = obj.get("type")
        out["keys"] = sorted({*obj.get("data", {}), *obj.get("stringData", {})})
    return out


def _text(objs: list[Manifest]) -> str:
    ordered = sorted(objs, key=lambda o: (o["kind"], o["metadata"]["name"]))
    return yaml.safe_dump_all([_projection(o) for o in ordered], sort_keys=True, width=1000)


def _stored(cluster: ControlPlane, manifests: list[Manifest]) -> list[Manifest]:
    """The objects as the API server would store them (a server-side dry run)."""
    result = cluster.kubectl(
        "apply",
        "--server-side",
        "--dry-run=server",
        "--field-manager=trainjobs-tests",
        "-o",
        "json",
        "-f",
        "-",
        stdin=yaml.safe_dump_all(manifests),
    )
    out = json.loads(result.stdout)
    items: list[Manifest] = out["items"] if out.get("kind") == "List" else [out]
    return items


def _live(cluster: ControlPlane, namespace: str, kinds: set[str]) -> list[Manifest]:
    found = []
    for kind in sorted(kinds):
        for item in cluster.client.items(LIST_PATHS[kind].format(ns=namespace)):
            item["kind"] = kind
            if (
                kind == "Pod"
                and item["metadata"].get("ownerReferences", [{}])[0].get("kind") == "Job"
            ):
                continue  # the launcher Job's Pod: the job controller's, compared as its Job
            if kind == "Service" and item["metadata"]["name"] == "kubernetes":
                continue
            if kind == "ConfigMap" and item["metadata"]["name"] == "kube-root-ca.crt":
                continue
            found.append(item)
    return found


@pytest.mark.parametrize("relative", EXPANSION_CASES, ids=lambda r: r.split("/")[0])
def test_pods_target_equals_operator_expansion(
    cluster: ControlPlane, kwok_node: str, relative: str
) -> None:
    """The operator's Pods and Services are field for field what `render --target pods` emits.

    Catches any drift between trainjobs' reading of the operators and what they do:
    a replica name, a label or annotation the controller adds or copies, an env var's
    value or order (TF_CONFIG, MASTER_ADDR, WORLD_SIZE, PET_*, PADDLE_*, the MPI
    hostfile), a port, hostname/subdomain, restartPolicy, an init container.
    """
    namespace = "expansion-" + relative.split("/")[0]
    doc = _job_doc(relative, namespace)
    expected_objects = [m for m in _render(doc, "pods") if m["kind"] in COMPARED_KINDS]
    kinds = {m["kind"] for m in expected_objects}
    cluster.ensure_namespace(namespace)
    expected = _stored(cluster, expected_objects)

    custom_resources = [m for m in _render(doc, "operator") if m["kind"] == doc["kind"]]
    result = apply(cluster, custom_resources, dry_run=False)
    assert result.ok, f"the operator target's {doc['kind']} was refused:\n{result}"
    try:
        want = {(m["kind"], m["metadata"]["name"]) for m in expected}

        ours = _text(expected)

        def settled() -> list[Manifest] | None:
            # The steady state: every object there and the pods running on kwok (the MPI
            # Operator lists a worker in discover_hosts.sh once it runs).
            live = _live(cluster, namespace, kinds)
            names = {(m["kind"], m["metadata"]["name"]) for m in live}
            running = all(
                p.get("status", {}).get("phase") == "Running" for p in live if p["kind"] == "Pod"
            )
            return live if want <= names and running and _text(live) == ours else None

        try:
            live = poll(f"the operator's objects of {doc['kind']} {namespace}", settled, 60)
        except AssertionError:
            live = _live(cluster, namespace, kinds)
        theirs = _text(live)
        diff = "\n".join(
            difflib.unified_diff(
                theirs.splitlines(),
                ours.splitlines(),
                "operator",
                "trainjobs --target pods",
                lineterm="",
            )
        )
        assert ours == theirs, f"{relative}: the pods target differs from the operator:\n{diff}"
    finally:
        for cr in custom_resources:
            cluster.kubectl(
                "delete",
                "--wait=false",
                "--ignore-not-found",
                "-f",
                "-",
                stdin=yaml.safe_dump(cr),
                check=False,
            )
        cluster.kubectl("delete", "namespace", namespace, "--wait=false", check=False)
