"""The ``pods`` target: the objects the operator would create, so none is needed.

The job's framework states what its operator creates (:class:`Expansion`: which
Services and Pods, with what identity and env), on the plan (``TargetInput``); this
module builds the Pod and Service objects from the plan's pod templates — the only
place that knows their shape. Objects an operator makes otherwise (a launcher Job,
ReplicaSets, a hostfile ConfigMap) are plans too (``plan.objects``), written by
``targets.objects``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from trainjobs.errors import Finding, Severity
from trainjobs.k8s.data import Manifest, PodTemplate, deep_copy
from trainjobs.plan import JobPlan
from trainjobs.plan.expansion import (
    CAPABILITY_POD_ANNOTATIONS,
    CAPABILITY_POD_LABELS,
    Expansion,
    PodPlan,
    ServicePlan,
)
from trainjobs.plan.jobset import JobSetPlan
from trainjobs.targets.base import Rendered, TargetPlugin, stated
from trainjobs.targets.jobset import jobset_manifest, jobset_objects
from trainjobs.targets.jobset_pods import pods_findings, pods_manifests
from trainjobs.targets.objects import object_manifest

__all__ = ["PodsTarget", "pod_manifest", "pod_objects", "service_manifest"]


class PodsTarget(TargetPlugin):
    name = "pods"
    description = "the Pods and Services the operator would create; no operator needed"
    takes_over = True

    def render(self, plan: JobPlan) -> Rendered:
        # What the operator would refuse to run (suspended, managed elsewhere) renders
        # nothing rather than pods no controller would have made: the framework states
        # no expansion then.
        given = stated(plan, self.name)
        findings, expansion = list(given.findings), given.expansion
        if expansion is not None and expansion.jobset is not None:
            findings = [*findings, *_jobset_findings(expansion.jobset)]
        if plan.unadmitted_warning is not None and not plan.admission.queued:
            findings = [*findings, plan.unadmitted_warning]
        if expansion is None or any(f.severity is Severity.ERROR for f in findings):
            return [], findings
        return _objects(expansion, plan), findings


def _jobset_findings(jobset: JobSetPlan) -> list[Finding]:
    """What the pods target cannot do as the JobSet controller would, at the JobSet
    plan's source."""
    found = pods_findings(jobset_manifest(jobset))
    if not jobset.source_path:
        return found
    return [
        replace(f, path=jobset.source_path, message=f"{jobset.source}{f.path}: {f.message}")
        for f in found
    ]


def pod_objects(expansion: Expansion, plan: JobPlan) -> list[Manifest]:
    """Every object the operator would create (``expansion``) for the job of ``plan``:
    its Services, then its Pods, then the rest, each group in the operator's order; the
    objects that own pods there (batch Jobs: a TrainJob's, an MPIJob's launcher) carry
    the plan's admission."""
    return _objects(expansion, plan)


def _objects(expansion: Expansion, plan: JobPlan) -> list[Manifest]:
    templates = {s.role: s.template for s in plan.pod_sets}
    # A JobSet the operator makes chains on: its objects beside it, then what the
    # JobSet controller makes of it.
    chained: list[Manifest] = []
    if expansion.jobset is not None:
        *beside, jobset = jobset_objects(expansion.jobset)
        chained = [*beside, *pods_manifests(jobset)]
    namespace = plan.namespace
    after = [object_manifest(o, namespace) for o in expansion.objects]
    return [
        *(service_manifest(s, namespace) for s in expansion.services),
        *(object_manifest(o, namespace) for o in expansion.first),
        *(pod_manifest(p, templates[p.role], namespace) for p in expansion.pods),
        # Every batch Job made here owns pods of a role (JobPlan.job_roles, or all).
        *(plan.admission.apply(m, "jobs") for m in [*after, *chained]),
    ]


def _capabilities_metadata(template_meta: Mapping[str, Any], pod: PodPlan) -> dict[str, Any]:
    """The operator's labels, and of the template's metadata only what trainjobs'
    capabilities (a queue, a gang) put there: the pod of an operator that builds its
    pods' metadata itself still joins its queue and gang on this target."""
    labels = template_meta.get("labels") or {}
    annotations = template_meta.get("annotations") or {}
    out: dict[str, Any] = {
        "labels": {
            **{k: v for k, v in labels.items() if k in CAPABILITY_POD_LABELS},
            **pod.labels,
        }
    }
    kept = {k: v for k, v in annotations.items() if k in CAPABILITY_POD_ANNOTATIONS}
    if kept:
        out["annotations"] = kept
    return out


def service_manifest(service: ServicePlan, namespace: str) -> Manifest:
    """The Service object of ``service``."""
    spec: dict[str, Any] = {"clusterIP": "None"} if service.headless else {}
    spec["selector"] = dict(service.selector)
    if service.ports is not None:
        ports: list[dict[str, Any]] = []
        for name, number in service.ports:
            port: dict[str, Any] = {"name": name} if name else {}
            port["port"] = number
            ports.append(port)
        spec["ports"] = ports
    if service.publish_not_ready_addresses:
        spec["publishNotReadyAddresses"] = True
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": service.name, "namespace": namespace, "labels": dict(service.labels)},
        "spec": spec,
    }


def pod_manifest(pod: PodPlan, template: Mapping[str, Any], namespace: str) -> Manifest:
    """The Pod object of ``pod``, made from a copy of its pod set's ``template``."""
    copy: PodTemplate = deep_copy(template)
    metadata: dict[str, Any] = {"name": pod.name, "namespace": namespace}
    if pod.template_metadata == "merge":
        metadata.update(_merged_metadata(copy.get("metadata") or {}, pod))
    else:
        metadata.update(_capabilities_metadata(copy.get("metadata") or {}, pod))
    spec = copy.get("spec") or {}
    if pod.scheduler_name != "keep":
        spec.pop("schedulerName", None)
        if pod.scheduler_name:
            spec["schedulerName"] = pod.scheduler_name
    if pod.service_account is not None and not spec.get("serviceAccountName"):
        spec["serviceAccountName"] = pod.service_account
    _place(spec, pod)
    found = [c for c in spec.get("containers") or [] if isinstance(c, dict)]
    if found and pod.main_command and _takes_command(found[0], pod):
        found[0]["command"] = list(pod.main_command)
        if pod.main_args:
            found[0]["args"] = list(pod.main_args)
    if pod.env:
        receivers = [c for i, c in enumerate(found) if pod.env_into in (None, i, c.get("name"))]
        for count, container in enumerate(receivers):
            # A pod's env is built fresh for it: only further containers need copies.
            entries = list(pod.env) if count == 0 else [deep_copy(e) for e in pod.env]
            container["env"] = [*(container.get("env") or []), *entries]
    if pod.init_containers:
        spec["initContainers"] = [*(spec.get("initContainers") or []), *pod.init_containers]
    if pod.restart_policy is not None:
        spec["restartPolicy"] = pod.restart_policy
    if pod.volumes:
        spec["volumes"] = [*(spec.get("volumes") or []), *map(deep_copy, pod.volumes)]
    if found and pod.main_mounts:
        mounts = [*(found[0].get("volumeMounts") or []), *map(deep_copy, pod.main_mounts)]
        found[0]["volumeMounts"] = mounts
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def _takes_command(container: Mapping[str, Any], pod: PodPlan) -> bool:
    if container.get("command"):
        return False
    return pod.main_command_if == "no_command" or not container.get("args")


def _place(spec: dict[str, Any], pod: PodPlan) -> None:
    """The pod's own DNS name under its Service, where the operator gives it one."""
    if pod.hostname is not None:
        spec["hostname"] = pod.hostname
    if pod.subdomain is not None:
        spec["subdomain"] = pod.subdomain
    if pod.host_network_dns and spec.get("hostNetwork"):
        spec["dnsPolicy"] = "ClusterFirstWithHostNet"
    if pod.dns_searches:
        dns = dict(spec.get("dnsConfig") or {})
        dns["searches"] = [*(dns.get("searches") or []), *pod.dns_searches]
        spec["dnsConfig"] = dns


def _merged_metadata(template: Mapping[str, Any], pod: PodPlan) -> dict[str, Any]:
    # The controllers copy a template's labels, annotations and finalizers to the pod
    # (control/pod_control.go, GetPodFromTemplate); their own labels win.
    labels = {k: v for k, v in (template.get("labels") or {}).items() if k not in pod.labels}
    labels.update(pod.labels)
    out: dict[str, Any] = {"labels": labels}
    if template.get("annotations"):
        out["annotations"] = dict(template["annotations"])
    if pod.copy_finalizers and template.get("finalizers"):
        out["finalizers"] = list(template["finalizers"])
    return out
