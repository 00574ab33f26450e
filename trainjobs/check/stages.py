"""Which part of a real cluster would refuse what each finding reports (:class:`Stage`).

``kubectl apply`` of a job passes, in order, the API server's own validation and the
CRD schema, the validating admission webhooks and Pod Security admission (for Pods);
what passes is stored, and the operator's controller acts on it later. A user needs to
know which: a webhook or schema refusal fails the apply at once, a controller rule
lets the job be created and fail (or be ignored) afterwards.

Findings are attributed here, by their code and, for a job's own rules, by the
framework of the job they belong to (``Framework.webhook_rules`` and
``controller_rules``, each citing the upstream code it reproduces); the tables below
name the upstream code of the rest. A code no table names is a
rule of trainjobs itself: nothing on the cluster refuses it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from trainjobs.errors import Finding, Stage
from trainjobs.frameworks.base import Framework, loading_stage
from trainjobs.spec.entry import JobEntry, Target

__all__ = ["attribute", "stage_of"]

# Findings about objects the operator creates itself: the API server refuses them when
# the controller creates them (core/service.go, core/pod.go), after the job was stored.
_CREATED_BY_OPERATOR = {
    "name.too_long": ("Service and Pod names", "them"),
    "service.port_names": ("Service validation", "the Services"),
}

_API_SERVER = {
    "schema.k8s": "OpenAPI schema of the kind",
    "name.invalid": "object names",
    "namespace.invalid": "object names",
    "label.invalid": "label and annotation validation",
    "annotation.invalid": "label and annotation validation",
    "pod.invalid": "Pod validation",
    "api.invalid": "Pod validation",
    "quantity.invalid": "resource quantities",
    "template.mount_path": "Pod validation",
    "template.volume_mount": "Pod validation",
    # Extended resources: requests must equal limits (core validation).
    "gpu.limits": "Pod validation",
    "restart.workload": "workload validation",
    # A custom resource whose version no CRD serves: "no matches for kind".
    "crd.version_missing": "no CRD serves this version",
}

_SCHEDULER = {
    # A gang larger than the pods that can start together never starts: Volcano and
    # scheduler-plugins keep every member Pending.
    "gang.min_available": "gang scheduler",
    "gang.deadlock": "gang scheduler",
    "pool.shape": "node autoscaler",
    "queue.quota": "Kueue never admits the job",
    "queue.resource": "Kueue never admits the job",
}

# A pod's containers (and init containers) are a list map keyed by name in every
# upstream CRD's embedded PodTemplateSpec (x-kubernetes-list-map-keys: [name]): two of
# one name are refused with the custom resource, not when its pods are created.
_DUPLICATE_CONTAINER = re.compile(r"\.(containers|initContainers)\[\d+\]\.name$")


def _upstream_crd(framework: Framework[Any] | None) -> bool:
    """Whether the job's CRD is its operator's own (full PodTemplateSpec schema, with
    quantity patterns and list-map keys), not one trainjobs generated for a seed kind."""
    return framework is not None and bool(framework.crd_file) and not framework.crd_generated


def _crd_refuses(finding: Finding, framework: Framework[Any] | None) -> bool:
    """A Pod rule the operator's CRD already enforces on the job's templates."""
    if not _upstream_crd(framework):
        return False
    if finding.code == "quantity.invalid":
        return True
    duplicate = _DUPLICATE_CONTAINER.search(finding.path)
    return (
        finding.code == "pod.invalid"
        and duplicate is not None
        and finding.message.startswith("two containers")
        and f".{duplicate.group(1)}[" in finding.message
    )


def _pod_level(target: Target | None) -> str:
    # On the trainer and jobset targets, too, the pods are made later (JobSet → Jobs).
    return (
        "when the operator creates the pods" if target in ("operator", "trainer", "jobset") else ""
    )


def _with(what: str, when: str) -> str:
    return f"{what}, {when}" if when else what


def stage_of(
    finding: Finding, framework: Framework[Any] | None = None, target: Target | None = None
) -> tuple[Stage, str]:
    """The stage that refuses ``finding`` on a real cluster, and who it is.

    ``framework`` and ``target`` are those of the job the finding belongs to (None for
    a stack-level finding): a job's own rules are its operator's webhook's or
    controller's, and a Pod rule of a job on the operator target bites only when the
    operator creates the pods (the job itself is accepted).
    """
    code = finding.code
    if code.startswith("pss."):
        # The namespace's enforce label; on the operator target the job is accepted and
        # the operator's pods are the ones refused.
        return Stage.POD_SECURITY, _with(code.split(".")[1], _pod_level(target))
    if code == "schema.crd":
        return Stage.CRD_SCHEMA, "openAPIV3Schema"
    if code == "schema.pod_template":
        # Every Kubeflow CRD embeds the full PodTemplateSpec schema.
        if target == "operator":
            return Stage.CRD_SCHEMA, "openAPIV3Schema"
        return Stage.API_SERVER, "OpenAPI schema of Pod"
    if code.startswith("schedule."):
        return Stage.SCHEDULER, "scheduler"
    if code in _SCHEDULER:
        return Stage.SCHEDULER, _SCHEDULER[code]
    operator = framework.operator if framework else ""
    if framework is not None:
        stage = None
        if code in framework.schema_rules:
            stage = Stage.CRD_SCHEMA
        elif code in framework.webhook_rules:
            stage = Stage.WEBHOOK
        elif code in framework.controller_rules:
            stage = Stage.CONTROLLER
        if stage is not None and target not in (None, "operator"):
            if code == "name.dns1035" and target == "pods":
                # The pods target creates the Pods and Services named after the job.
                return Stage.API_SERVER, "Service and Pod names"
            # No operator sees the job on the pods or trainer target: trainjobs holds
            # the job to the operator's rule, which no part of the cluster checks.
            who = {Stage.WEBHOOK: "webhook", Stage.CRD_SCHEMA: "CRD"}.get(stage, "controller")
            return Stage.TRAINJOBS, f"{operator} {who} rule, kept without the operator"
        if stage is Stage.CRD_SCHEMA:
            return stage, "openAPIV3Schema"
        if stage is not None:
            return stage, operator
        if code in _CREATED_BY_OPERATOR:
            what, objects = _CREATED_BY_OPERATOR[code]
            when = f"when the operator creates {objects}" if target == "operator" else ""
            return Stage.API_SERVER, _with(what, when)
    if framework is not None and finding.code.startswith("spec."):
        loaded = loading_stage(framework, finding)
        if loaded is not None:
            return loaded
    if code in _API_SERVER:
        if target == "operator" and _crd_refuses(finding, framework):
            return Stage.CRD_SCHEMA, "openAPIV3Schema"
        what = _API_SERVER[code]
        in_template = ".template." in finding.path
        if what.startswith("Pod") or in_template or code in ("quantity.invalid", "gpu.limits"):
            return Stage.API_SERVER, _with(what, _pod_level(target))
        return Stage.API_SERVER, what
    return Stage.TRAINJOBS, ""


def _owner(path: str, entries: Sequence[JobEntry]) -> JobEntry | None:
    """The job whose path ``path`` starts with (``jobs[0]``, ``jobs[0].spec…``)."""
    best: JobEntry | None = None
    for entry in entries:
        prefix = entry.path
        inside = path == prefix or path.startswith((f"{prefix}.", f"{prefix}[", f"{prefix} "))
        if inside and (best is None or len(prefix) > len(best.path)):
            best = entry
    return best


def attribute(
    findings: Iterable[Finding],
    entries: Sequence[JobEntry] = (),
    target: Target | None = None,
    default_target: Target = "operator",
) -> list[Finding]:
    """``findings``, each with its stage (one already set is kept).

    ``entries`` are the stack's jobs, to find the job (framework and target) a finding
    belongs to by its path; ``target`` overrides each job's own, as in ``run``.
    """
    out: list[Finding] = []
    for finding in findings:
        if finding.stage is not None:
            out.append(finding)
            continue
        entry = _owner(finding.path, entries)
        framework = entry.framework if entry else None
        chosen = (target or entry.target(default_target)) if entry else None
        stage, by = stage_of(finding, framework, chosen)
        out.append(finding.staged(stage, by))
    return out
