"""Reading a controller's expansion back from the API server, to compare it with a
render: the objects as stored, projected onto the fields an expansion decides (none the
cluster assigns), as sorted YAML text for a readable diff."""

from __future__ import annotations

import copy
import difflib
import json
from collections.abc import Iterable
from typing import Any

import yaml

from tests.cluster.control_plane import ControlPlane
from tests.cluster.kube import poll
from trainjobs.check import run
from trainjobs.spec import parse_documents

Manifest = dict[str, Any]

LIST_PATHS = {
    "Pod": "/api/v1/namespaces/{ns}/pods",
    "Service": "/api/v1/namespaces/{ns}/services",
    "ConfigMap": "/api/v1/namespaces/{ns}/configmaps",
    "Secret": "/api/v1/namespaces/{ns}/secrets",
    "Job": "/apis/batch/v1/namespaces/{ns}/jobs",
    "JobSet": "/apis/jobset.x-k8s.io/v1alpha2/namespaces/{ns}/jobsets",
    "PodGroup": "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{ns}/podgroups",
    "PersistentVolumeClaim": "/api/v1/namespaces/{ns}/persistentvolumeclaims",
    "ServiceAccount": "/api/v1/namespaces/{ns}/serviceaccounts",
    "Role": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
    "RoleBinding": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
}


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
BINDER_ANNOTATIONS = ("pv.kubernetes.io/bind-completed", "pv.kubernetes.io/bound-by-controller")
"""What the volume binder writes on a claim it bound."""
JOB_UID_LABELS = (
    "controller-uid",
    "batch.kubernetes.io/controller-uid",
    # JobSet copies its own uid onto each Job and pod template: trainjobs' render carries
    # a name-derived stand-in, the cluster the JobSet's real uid.
    "jobset.sigs.k8s.io/jobset-uid",
)


def render_doc(docs: dict[str, Any] | list[dict[str, Any]], target: str) -> list[Manifest]:
    """The manifests of one document (or several, rendered together) on ``target``."""
    listed = docs if isinstance(docs, list) else [docs]
    stack = parse_documents(copy.deepcopy(listed), source="<expansion>")
    return list(run(stack, target=target).manifests)  # type: ignore[arg-type]


def projection(obj: Manifest) -> Manifest:
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
        for where in (template_meta, meta):
            for key in JOB_UID_LABELS:
                where.get("labels", {}).pop(key, None)
                where.get("annotations", {}).pop(key, None)
        out["spec"] = spec
    elif kind in ("JobSet", "PodGroup"):
        out["spec"] = obj["spec"]
    elif kind == "PersistentVolumeClaim":
        # The volume it is bound to is the binder's choice, not the expansion's.
        out["spec"] = {k: v for k, v in obj["spec"].items() if k != "volumeName"}
        for key in BINDER_ANNOTATIONS:
            meta.get("annotations", {}).pop(key, None)
        if meta.get("annotations") == {}:
            del meta["annotations"]
    elif kind == "ConfigMap":
        out["data"] = obj.get("data", {})
    elif kind == "Role":
        out["rules"] = obj.get("rules", [])
    elif kind == "RoleBinding":
        out["roleRef"] = obj["roleRef"]
        out["subjects"] = obj.get("subjects", [])
    elif kind == "ServiceAccount" and "automountServiceAccountToken" in obj:
        out["automountServiceAccountToken"] = obj["automountServiceAccountToken"]
    elif kind == "Secret":
        # The operator generates a fresh SSH key; trainjobs a placeholder Pulumi fills.
        out["type"] = obj.get("type")
        out["keys"] = sorted({*obj.get("data", {}), *obj.get("stringData", {})})
    return out


def as_text(objs: list[Manifest]) -> str:
    """The objects' projections, sorted by kind and name, as one YAML text."""
    ordered = sorted(objs, key=lambda o: (o["kind"], o["metadata"]["name"]))
    return yaml.safe_dump_all([projection(o) for o in ordered], sort_keys=True, width=1000)


def stored(cluster: ControlPlane, manifests: list[Manifest]) -> list[Manifest]:
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


def live_objects(cluster: ControlPlane, namespace: str, kinds: set[str]) -> list[Manifest]:
    """What the namespace holds of these kinds, but the objects every namespace has and
    the Pods a Job owns (its Job stands for them)."""
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
            if kind == "ServiceAccount" and item["metadata"]["name"] == "default":
                continue
            if kind == "ConfigMap" and is_runtime_snapshot(item):
                continue  # the Trainer's own reconcile state (test_trainer_expansion reads it)
            found.append(item)
    return found


def is_runtime_snapshot(obj: Manifest) -> bool:
    """Whether a ConfigMap is the Trainer v2.3.0 controller's ``<trainjob>-runtime-snapshot``:
    the runtime as it read it from the API server (uid, resourceVersion and all), kept so
    later reconciles of the TrainJob use the same runtime."""
    owners = obj["metadata"].get("ownerReferences") or [{}]
    name: str = obj["metadata"]["name"]
    return owners[0].get("kind") == "TrainJob" and name.endswith("-runtime-snapshot")


def settled_diff(
    cluster: ControlPlane,
    namespace: str,
    expected: list[Manifest],
    controller: str,
    kinds: Iterable[str] = (),
    timeout: float = 60,
) -> str:
    """Wait until the namespace holds, of ``kinds`` (default: those in ``expected``), what
    ``expected`` (as stored) holds, with its Pods running on kwok, and equals it in
    projection; the unified diff (controller's side first) when it never does, else empty.
    An object of those kinds the controller made and trainjobs did not is a difference."""
    kinds = set(kinds) or {m["kind"] for m in expected}
    want = {(m["kind"], m["metadata"]["name"]) for m in expected}
    ours = as_text(expected)

    def settled() -> list[Manifest] | None:
        live = live_objects(cluster, namespace, kinds)
        names = {(m["kind"], m["metadata"]["name"]) for m in live}
        running = all(
            p.get("status", {}).get("phase") == "Running" for p in live if p["kind"] == "Pod"
        )
        return live if want <= names and running and as_text(live) == ours else None

    try:
        live = poll(f"the objects {controller} makes in {namespace}", settled, timeout)
    except AssertionError:
        live = live_objects(cluster, namespace, kinds)
    lines = difflib.unified_diff(
        as_text(live).splitlines(), ours.splitlines(), controller, "trainjobs", lineterm=""
    )
    return "\n".join(lines)


def delete_all(cluster: ControlPlane, objects: list[Manifest], namespace: str) -> None:
    """Delete a test's objects and its namespace, not waiting for either to go."""
    cluster.kubectl(
        "delete",
        "--wait=false",
        "--ignore-not-found",
        "-f",
        "-",
        stdin=yaml.safe_dump_all(objects),
        check=False,
    )
    cluster.kubectl("delete", "namespace", namespace, "--wait=false", check=False)
