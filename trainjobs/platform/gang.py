"""Gang scheduling, once for every framework: the PodGroup and the pods' decorations.

An operator installed with gang scheduling creates one PodGroup per job and marks
every pod of the job as a member (kubeflow-operators.md §5): Volcano
(``scheduling.volcano.sh/v1beta1``) or scheduler-plugins coscheduling
(``scheduling.x-k8s.io/v1alpha1``). On the ``pods`` target trainjobs does the same
itself. Everything that differs between operators is a :class:`GangFacts` the
framework states; nothing here knows a framework.

Deviation: the operators order replica types by their PriorityClass *value* before
summing ``minResources`` over the first ``minMember`` pods; values live in the
cluster, so trainjobs keeps the framework's member order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final, Literal, get_args

from trainjobs.k8s.data import Manifest, PodTemplate, deep_copy
from trainjobs.k8s.quantity import QuantityError, format_quantity, parse_quantity
from trainjobs.plan import GangFacts, JobPlan
from trainjobs.plan.gang import (
    GROUP_NAME_ANNOTATION,
    POD_GROUP_API_VERSIONS,
    POD_GROUP_LABEL,
    QUEUE_ANNOTATION,
    TASK_SPEC_ANNOTATION,
)

__all__ = [
    "DEFAULT_COSCHEDULER",
    "GANG_MECHANISMS",
    "GROUP_NAME_ANNOTATION",
    "POD_GROUP_LABEL",
    "QUEUE_ANNOTATION",
    "TASK_SPEC_ANNOTATION",
    "VOLCANO",
    "GangMechanism",
    "GangScheduler",
    "decorate",
    "gang_templates",
    "min_member",
    "pod_group",
]

GangMechanism = Literal["volcano", "scheduler-plugins"]
GANG_MECHANISMS: tuple[GangMechanism, ...] = get_args(GangMechanism)
VOLCANO: Final = "volcano"
"""Volcano's scheduler name, and the operators' flag value that selects Volcano."""
DEFAULT_COSCHEDULER: Final = "scheduler-plugins-scheduler"
"""The scheduler name of scheduler-plugins' "as a second scheduler" install."""


@dataclass(frozen=True)
class GangScheduler:
    """How pods of a gang are scheduled together.

    Attributes:
        mechanism: ``volcano`` (Volcano PodGroup) or ``scheduler-plugins``
            (coscheduling PodGroup).
        scheduler_name: the pods' ``schedulerName``.
    """

    mechanism: GangMechanism
    scheduler_name: str

    @classmethod
    def from_flag(cls, value: str) -> GangScheduler:
        """The operators' flag: ``volcano`` selects Volcano, any other name is a
        scheduler-plugins scheduler of that name."""
        if value == VOLCANO:
            return cls("volcano", VOLCANO)
        return cls("scheduler-plugins", value)

    @classmethod
    def default(cls, mechanism: GangMechanism) -> GangScheduler:
        """The usual scheduler of a mechanism when nothing names one."""
        return cls(mechanism, VOLCANO if mechanism == "volcano" else DEFAULT_COSCHEDULER)


def min_member(facts: GangFacts, policy: Mapping[str, Any] | None) -> int:
    """``schedulingPolicy.minAvailable``, else the operator's default."""
    value = (policy or {}).get("minAvailable")
    return facts.min_member if value is None else int(value)


def _requests(template: Mapping[str, Any]) -> dict[str, Any]:
    """A pod's requests per resource: each container's requests, else its limits."""
    total: dict[str, list[Any]] = {}
    for container in (template.get("spec") or {}).get("containers") or []:
        resources = container.get("resources") or {}
        requests = dict(resources.get("limits") or {})
        requests.update(resources.get("requests") or {})
        for name, value in requests.items():
            total.setdefault(name, []).append(value)
    return total


def _sum(values: Iterable[Any]) -> str | int:
    """Quantities added up, in their own unit when they share one (``4Gi`` + ``4Gi`` = ``8Gi``)."""
    items = list(values)
    if all(isinstance(v, int) for v in items):
        return sum(int(v) for v in items)
    texts = [str(v) for v in items]
    digits = [t.rstrip("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") for t in texts]
    suffixes = {t[len(d) :] for t, d in zip(texts, digits, strict=True)}
    if len(suffixes) == 1 and all(d.isdigit() for d in digits):
        return f"{sum(int(d) for d in digits)}{suffixes.pop()}"
    try:
        return format_quantity(sum((parse_quantity(t) for t in texts), Fraction(0)))
    except QuantityError:
        return texts[0]


def _min_resources(
    facts: GangFacts, templates: Mapping[str, Mapping[str, Any]], members: int
) -> dict[str, Any]:
    """Requests summed over the first ``members`` pods, in the framework's member order."""
    collected: dict[str, list[Any]] = {}
    left = members
    for member in facts.members:
        count = min(member.pods, left)
        left -= count
        for name, values in _requests(templates.get(member.role) or {}).items():
            collected.setdefault(name, []).extend(values * count)
        if left <= 0:
            break
    return {name: _sum(values) for name, values in sorted(collected.items())}


def pod_group(plan: JobPlan, scheduler: GangScheduler) -> Manifest:
    """The PodGroup the operator would create for the (defaulted) job."""
    facts = plan.gang
    policy = plan.scheduling_policy or {}
    templates = {ref.role: ref.template for ref in plan.pod_sets}
    members = min_member(facts, policy)
    metadata: dict[str, Any] = {"name": plan.name, "namespace": plan.namespace}
    if plan.annotations:
        metadata["annotations"] = dict(plan.annotations)
    spec: dict[str, Any] = {"minMember": members}
    resources = policy.get("minResources")
    if resources is None and members > 0:
        resources = _min_resources(facts, templates, members) or None
    if scheduler.mechanism == "volcano":
        queue = policy.get("queue") or ""
        if not queue and facts.queue_annotation:
            queue = plan.annotations.get(QUEUE_ANNOTATION, "")
        queue = queue or facts.default_queue
        if queue:
            spec["queue"] = queue
        priority = policy.get("priorityClass") or next(
            (
                str((templates[r].get("spec") or {}).get("priorityClassName"))
                for r in facts.priority_roles
                if r in templates and (templates[r].get("spec") or {}).get("priorityClassName")
            ),
            "",
        )
        if priority:
            spec["priorityClassName"] = priority
        if resources:
            spec["minResources"] = dict(resources)
    else:
        if resources:
            spec["minResources"] = dict(resources)
        timeout = policy.get("scheduleTimeoutSeconds", facts.default_timeout)
        if timeout is not None:
            spec["scheduleTimeoutSeconds"] = timeout
    return {
        "apiVersion": POD_GROUP_API_VERSIONS[scheduler.mechanism],
        "kind": "PodGroup",
        "metadata": metadata,
        "spec": spec,
    }


def decorate(
    template: Mapping[str, Any],
    job_name: str,
    task: str,
    facts: GangFacts,
    scheduler: GangScheduler,
) -> PodTemplate:
    """A pod template marked as a member of the job's gang, as the operator marks pods."""
    out = deep_copy(template)
    spec = out.setdefault("spec", {})
    if facts.replace_scheduler_name or not spec.get("schedulerName"):
        spec["schedulerName"] = scheduler.scheduler_name
    meta = out.setdefault("metadata", {})
    if scheduler.mechanism == "volcano":
        annotations = dict(meta.get("annotations") or {})
        annotations[GROUP_NAME_ANNOTATION] = job_name
        if task:
            annotations[TASK_SPEC_ANNOTATION] = task
        meta["annotations"] = annotations
    else:
        meta["labels"] = {**(meta.get("labels") or {}), POD_GROUP_LABEL: job_name}
    return out


def gang_templates(plan: JobPlan, scheduler: GangScheduler) -> JobPlan:
    """The plan with every gang member's pod template decorated."""
    facts = plan.gang
    tasks = {m.role: m.task for m in facts.members}
    templates = {
        ref.role: decorate(ref.template, plan.name, tasks[ref.role], facts, scheduler)
        for ref in plan.pod_sets
        if ref.role in tasks
    }
    return plan.with_templates(templates)
