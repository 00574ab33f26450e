"""What the JobSet v0.12.0 controller creates for a JobSet: the ``pods`` target of a
job whose operator makes a JobSet (a TrainJob: TrainJob → JobSet → these objects).

:func:`pods_manifests` applies the JobSet webhook's defaults and then builds what the
controller creates (kubeflow-operators.md §7.5; JobSet v0.12.0
``pkg/controllers/jobset_controller.go``, ``volume_claim_policy.go``,
``pkg/webhooks/jobset_webhook.go``): the headless Service named the subdomain, the PVCs of
``volumeClaimPolicies``, and per replicated job its ``replicas`` Indexed batch/v1 Jobs
``<jobset>-<replicatedJob>-<index>``, each Job and its pod template labelled and annotated
with the ``jobset.sigs.k8s.io/*`` keys. The Job controller (built into Kubernetes) then
names each pod's host ``<job>-<completion index>`` in the subdomain, so
``<tj>-node-0-0.<tj>`` is the first trainer pod.

Deviations, all deliberate:

* ``jobset.sigs.k8s.io/jobset-uid`` is the JobSet's UID, which exists only once the API
  server has made the JobSet; here it is a UUID derived from the namespace and name
  (stable across renders, unique per JobSet). Nothing in the pods reads it.
* No ownerReferences (no JobSet object on this target; Pulumi owns the objects).
* ``dependsOn`` and ``startupPolicy: InOrder``: the JobSet controller creates a Job only
  once the jobs it depends on are Ready/Complete; here every Job is created at once
  (:func:`pods_findings` warns). Exclusive placement's pod affinities come from JobSet's
  pod webhook, which this target does without (also warned).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping
from typing import Any, Final

from trainjobs.errors import Finding, Rule, Severity
from trainjobs.k8s.data import Manifest, deep_copy
from trainjobs.plan.jobset import claim_volumes, defaulted_spec, job_name

__all__ = [
    "JOBSET_LABELS",
    "jobset_uid",
    "pods_findings",
    "pods_manifests",
]

_PREFIX: Final = "jobset.sigs.k8s.io"
NAME_KEY: Final = f"{_PREFIX}/jobset-name"
UID_KEY: Final = f"{_PREFIX}/jobset-uid"
JOBSET_LABELS: Final = (
    NAME_KEY,
    UID_KEY,
    f"{_PREFIX}/replicatedjob-name",
    f"{_PREFIX}/restart-attempt",
    f"{_PREFIX}/replicatedjob-replicas",
    f"{_PREFIX}/global-replicas",
    f"{_PREFIX}/job-index",
    f"{_PREFIX}/job-key",
    f"{_PREFIX}/job-global-index",
    f"{_PREFIX}/group-name",
    f"{_PREFIX}/group-replicas",
    f"{_PREFIX}/job-group-index",
)
"""The keys the JobSet controller puts on each Job and its pod template, as labels and as
annotations (without the ``RestartJob`` feature gate, off by default)."""
COORDINATOR_KEY: Final = f"{_PREFIX}/coordinator"
EXCLUSIVE_KEY: Final = "alpha.jobset.sigs.k8s.io/exclusive-topology"
NODE_SELECTOR_STRATEGY_KEY: Final = "alpha.jobset.sigs.k8s.io/node-selector"
NAMESPACED_JOB_KEY: Final = "alpha.jobset.sigs.k8s.io/namespaced-job"
NO_SCHEDULE_TAINT_KEY: Final = "alpha.jobset.sigs.k8s.io/no-schedule"
_UID_NAMESPACE: Final = uuid.UUID("5b0e4f38-3d9b-4c38-9f5e-6a0e2f6c7d21")

# What JobSet does that the pods target cannot, declared once.
PODS_DEPENDS_ON: Final = Rule(
    "trainjob.pods_depends_on",
    "JobSet starts {job!r} only once {waits}; on the pods target `pulumi up` keeps that "
    "order for Complete (it creates the Job once those it waits for have completed), "
    "{unkept}",
    hint="apply the pods target with `pulumi up` (trainjobs' components), make the job's "
    "containers wait for what they need, or use the jobset or operator target",
    severity=Severity.WARNING,
)
PODS_STARTUP_ORDER: Final = Rule(
    "trainjob.pods_startup_order",
    "JobSet starts the replicated jobs in order; the pods target starts them all at once",
    hint="use the jobset or operator target",
    severity=Severity.WARNING,
)
PODS_EXCLUSIVE: Final = Rule(
    "trainjob.pods_exclusive",
    "exclusive placement's pod affinities come from JobSet's pod webhook, which the pods "
    "target does without: Jobs may share a topology domain",
    hint="use the jobset or operator target",
    severity=Severity.WARNING,
)


def jobset_uid(namespace: str, name: str) -> str:
    """The stand-in for the JobSet's UID: stable, and unique per namespace and name."""
    return str(uuid.uuid5(_UID_NAMESPACE, f"{namespace}/{name}"))


def _subdomain(jobset: Mapping[str, Any]) -> str:
    network = jobset["spec"].get("network") or {}
    return str(network.get("subdomain") or jobset["metadata"]["name"])


def _rjobs(jobset: Mapping[str, Any]) -> list[dict[str, Any]]:
    rjobs: list[dict[str, Any]] = jobset["spec"].get("replicatedJobs") or []
    return rjobs


def _keys(jobset: Mapping[str, Any], rjob: Mapping[str, Any], index: int) -> dict[str, str]:
    """The ``jobset.sigs.k8s.io/*`` values of one Job (``labelAndAnnotateObject``)."""
    name = str(jobset["metadata"]["name"])
    namespace = str(jobset["metadata"].get("namespace") or "default")
    rjobs = _rjobs(jobset)
    group = rjob["groupName"]
    before = 0
    for other in rjobs:
        if other["name"] == rjob["name"]:
            break
        before += other["replicas"]
    in_group = [o for o in rjobs if o["groupName"] == group]
    group_before = 0
    for other in in_group:
        if other["name"] == rjob["name"]:
            break
        group_before += other["replicas"]
    key = hashlib.sha1(f"{namespace}/{job_name(name, rjob['name'], index)}".encode()).hexdigest()
    values = [
        name,
        jobset_uid(namespace, name),
        str(rjob["name"]),
        "0",
        str(rjob["replicas"]),
        str(sum(o["replicas"] for o in rjobs)),
        str(index),
        key,
        str(before + index),
        str(group),
        str(sum(o["replicas"] for o in in_group)),
        str(group_before + index),
    ]
    return dict(zip(JOBSET_LABELS, values, strict=True))


def _coordinator(jobset: Mapping[str, Any]) -> str | None:
    coordinator = jobset["spec"].get("coordinator")
    if not isinstance(coordinator, dict):
        return None
    return (
        f"{jobset['metadata']['name']}-{coordinator.get('replicatedJob')}-"
        f"{coordinator.get('jobIndex', 0)}-{coordinator.get('podIndex', 0)}.{_subdomain(jobset)}"
    )


def _decorate(
    meta: dict[str, Any], jobset: Mapping[str, Any], rjob: Mapping[str, Any], keys: dict[str, str]
) -> None:
    labels = {**(meta.get("labels") or {}), **keys}
    annotations = {**(meta.get("annotations") or {}), **keys}
    coordinator = _coordinator(jobset)
    if coordinator is not None:
        labels[COORDINATOR_KEY] = annotations[COORDINATOR_KEY] = coordinator
    for source in (jobset["metadata"].get("annotations") or {}, _job_annotations(rjob)):
        if EXCLUSIVE_KEY in source:
            annotations[EXCLUSIVE_KEY] = source[EXCLUSIVE_KEY]
            if NODE_SELECTOR_STRATEGY_KEY in source:
                annotations[NODE_SELECTOR_STRATEGY_KEY] = source[NODE_SELECTOR_STRATEGY_KEY]
    meta["labels"] = labels
    meta["annotations"] = annotations


def _job_annotations(rjob: Mapping[str, Any]) -> dict[str, str]:
    annotations: dict[str, str] = ((rjob.get("template") or {}).get("metadata") or {}).get(
        "annotations"
    ) or {}
    return annotations


def _job(jobset: Mapping[str, Any], rjob: Mapping[str, Any], index: int) -> Manifest:
    name = str(jobset["metadata"]["name"])
    namespace = str(jobset["metadata"].get("namespace") or "default")
    template = deep_copy(rjob["template"])
    job_meta = deep_copy(template.get("metadata") or {})
    metadata: dict[str, Any] = {"name": job_name(name, rjob["name"], index), "namespace": namespace}
    for key in ("labels", "annotations"):
        if job_meta.get(key):
            metadata[key] = dict(job_meta[key])
    keys = _keys(jobset, rjob, index)
    _decorate(metadata, jobset, rjob, keys)
    spec = template["spec"]
    pod_template = spec.setdefault("template", {})
    pod_meta = pod_template.setdefault("metadata", {})
    _decorate(pod_meta, jobset, rjob, keys)
    pod_spec = pod_template.setdefault("spec", {})
    if (jobset["spec"].get("network") or {}).get("enableDNSHostnames"):
        pod_spec["subdomain"] = _subdomain(jobset)
    if (
        EXCLUSIVE_KEY in metadata["annotations"]
        and NODE_SELECTOR_STRATEGY_KEY in metadata["annotations"]
    ):
        pod_spec["nodeSelector"] = {
            **(pod_spec.get("nodeSelector") or {}),
            NAMESPACED_JOB_KEY: f"{namespace}_{metadata['name']}",
        }
        pod_spec["tolerations"] = [
            *(pod_spec.get("tolerations") or []),
            {"key": NO_SCHEDULE_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"},
        ]
    spec["suspend"] = bool(jobset["spec"].get("suspend"))
    claims = claim_volumes(name, jobset["spec"], pod_spec)
    if claims:
        pod_spec["volumes"] = [*(pod_spec.get("volumes") or []), *claims]
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata, "spec": spec}


def _claims(jobset: Mapping[str, Any]) -> list[Manifest]:
    name = str(jobset["metadata"]["name"])
    namespace = str(jobset["metadata"].get("namespace") or "default")
    out = []
    for policy in jobset["spec"].get("volumeClaimPolicies") or []:
        for claim in policy.get("templates") or []:
            meta = claim.get("metadata") or {}
            metadata: dict[str, Any] = {
                "name": f"{meta.get('name')}-{name}",
                "namespace": namespace,
                "labels": {**(meta.get("labels") or {}), NAME_KEY: name},
            }
            if meta.get("annotations"):
                metadata["annotations"] = dict(meta["annotations"])
            out.append(
                {
                    "apiVersion": "v1",
                    "kind": "PersistentVolumeClaim",
                    "metadata": metadata,
                    "spec": deep_copy(claim.get("spec") or {}),
                }
            )
    return out


def pods_manifests(jobset_manifest: Mapping[str, Any]) -> list[Manifest]:
    """The objects the JobSet controller creates for ``jobset_manifest``: its PVCs, the
    headless Service (when DNS hostnames are on, the default) and the Jobs, in apply order."""
    jobset = {**jobset_manifest, "spec": defaulted_spec(jobset_manifest.get("spec") or {})}
    name = str(jobset["metadata"]["name"])
    namespace = str(jobset["metadata"].get("namespace") or "default")
    objects = _claims(jobset)
    network = jobset["spec"]["network"]
    if network.get("enableDNSHostnames"):
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": _subdomain(jobset), "namespace": namespace},
                "spec": {
                    "clusterIP": "None",
                    "selector": {NAME_KEY: name},
                    "publishNotReadyAddresses": bool(network.get("publishNotReadyAddresses", True)),
                },
            }
        )
    for rjob in _rjobs(jobset):
        objects += [_job(jobset, rjob, index) for index in range(rjob["replicas"])]
    return objects


def pods_findings(jobset_manifest: Mapping[str, Any], path: str = "") -> list[Finding]:
    """Warnings for what the JobSet controller does over time and this target cannot:
    starting jobs in order (``dependsOn``, ``startupPolicy: InOrder``), exclusive
    placement's pod affinities. ``path`` prefixes the paths (the user's document)."""
    spec = jobset_manifest.get("spec") or {}
    findings = []
    for index, rjob in enumerate(spec.get("replicatedJobs") or []):
        depends = rjob.get("dependsOn")
        if depends:
            waits = ", ".join(f"{d.get('name')} {d.get('status')}" for d in depends)
            where = f"{path}replicatedJobs[{index}].dependsOn"
            unkept = (
                "not for Ready, and the rendered files applied with kubectl start it at once"
                if any(d.get("status") == "Ready" for d in depends)
                else "but the rendered files applied with kubectl start it at once"
            )
            findings.append(
                PODS_DEPENDS_ON.at(where, depends, job=rjob.get("name"), waits=waits, unkept=unkept)
            )
    startup = spec.get("startupPolicy")
    if (startup or {}).get("startupPolicyOrder") == "InOrder":
        findings.append(PODS_STARTUP_ORDER.at(f"{path}startupPolicy", startup))
    annotations = (jobset_manifest.get("metadata") or {}).get("annotations") or {}
    exclusive = EXCLUSIVE_KEY in annotations or any(
        EXCLUSIVE_KEY in _job_annotations(r) for r in spec.get("replicatedJobs") or []
    )
    if exclusive:
        findings.append(PODS_EXCLUSIVE.at(f"{path}replicatedJobs", EXCLUSIVE_KEY))
    return findings
