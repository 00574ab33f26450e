"""Gang scheduling of one job: which mechanism, who creates the PodGroup, is it coherent.

The mechanism is the job's ``trainjobs.gang`` option, else the gang scheduler of the
stack's operator that runs the job's kind. On the ``pods`` target trainjobs creates
the PodGroup and decorates the pods (``platform.gang``); on the ``operator`` target
the operator does both, so only the checks run. Every finding names the field to
change, with the numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from trainjobs.errors import NO_VALUE, Finding, Rule, Severity
from trainjobs.k8s.data import Manifest
from trainjobs.plan import GangFacts, JobPlan
from trainjobs.plan.admission import QUEUE_LABEL
from trainjobs.platform.gang import (
    DEFAULT_COSCHEDULER,
    GangScheduler,
    gang_templates,
    min_member,
    pod_group,
)
from trainjobs.platform.operator import OperatorKind
from trainjobs.render.resolve import PlatformIndex
from trainjobs.spec.entry import OPTIONS_KEY, JobEntry, PlatformEntry, Target

__all__ = ["GangEffect", "apply_gang"]

POLICY = "spec.runPolicy.schedulingPolicy"

UNSUPPORTED = Rule(
    "gang.unsupported",
    "a {kind} cannot be gang-scheduled: {reason}",
    hint=f"remove {OPTIONS_KEY}.gang",
)
NO_MECHANISM = Rule(
    "gang.no_mechanism",
    "schedulingPolicy has no effect on the {target} target unless the job names a gang mechanism",
    hint=f"set {OPTIONS_KEY}.gang: volcano or scheduler-plugins",
    severity=Severity.WARNING,
)
OPERATOR_UNKNOWN = Rule(
    "gang.operator_unknown",
    "schedulingPolicy takes effect only if the cluster's operator runs with gang "
    "scheduling, and no operator in this stack runs this kind",
    hint="declare the operator in the stack with spec.gangScheduler, or set "
    f"{OPTIONS_KEY}.gang to say which mechanism the cluster's operator uses",
    severity=Severity.ADVICE,
)
TWO_MECHANISMS = Rule(
    "gang.two_mechanisms",
    "the job asks for {asked}, but {operator} gang-schedules with {installed}; "
    "a job has one gang mechanism",
    hint=f"drop {OPTIONS_KEY}.gang, or change the operator's spec.gangScheduler",
)
GANG_TOO_BIG = Rule(
    "gang.min_available",
    "the gang waits for {members} pods to start together, but the job has {pods} ({counts}), "
    "so it never starts",
    hint="lower minAvailable to at most {pods}, or add replicas",
)
EMPTY_GANG = Rule(
    "gang.min_available",
    "a gang of 0 pods schedules nothing together",
    hint="set minAvailable to at least 1, or remove it (default {default})",
)
DEADLOCK = Rule(
    "gang.deadlock",
    "the operator creates the {roles} only once the other {early} pods are Ready, but the "
    "gang holds those pods until {members} pods exist, the {roles} among them: the job "
    "never starts",
    hint="set minAvailable to {early} (the pods created first), or "
    "launcherCreationPolicy: AtStartup",
)
SCHEDULER_REPLACED = Rule(
    "gang.scheduler_replaced",
    "the operator replaces this schedulerName with {scheduler!r} for gang scheduling",
    hint="remove schedulerName",
    severity=Severity.WARNING,
)
OWN_SCHEDULER = Rule(
    "gang.scheduler_name",
    "{role} pods name their own scheduler, but only {scheduler!r} honours the job's "
    "{mechanism} gang; the operator keeps the template's name, so these pods would not "
    "wait for the gang",
    hint="remove schedulerName, or set it to {scheduler!r}",
)
TWO_QUEUES = Rule(
    "gang.two_queues",
    "the job is queued twice: by Kueue (queue {kueue!r}) and by Volcano (queue {volcano!r}); "
    "each admits it on its own quota",
    hint="drop schedulingPolicy.queue (Kueue admits, Volcano gangs), or the Kueue queue",
)


@dataclass(frozen=True)
class GangEffect:
    """The job's plan after gang scheduling, the objects it adds, and the findings."""

    plan: JobPlan
    manifests: list[Manifest] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


def _operator(entry: JobEntry, index: PlatformIndex) -> PlatformEntry | None:
    kind = entry.framework.kind
    for found in index.of_category("operator"):
        plugin = found.plugin
        if isinstance(plugin, OperatorKind) and plugin.serves(
            found.resource, kind.api_version, kind.kind
        ):
            return found
    return None


def _named(found: PlatformEntry) -> str:
    return f"{found.path} ({found.plugin.kind} {found.resource.name!r})"


def apply_gang(entry: JobEntry, plan: JobPlan, target: Target, index: PlatformIndex) -> GangEffect:
    """Gang-schedule the (defaulted) job on ``target``; paths are relative to the job."""
    policy = plan.scheduling_policy
    asked = entry.options.gang
    if target == "trainer":
        # The runtime's podGroupPolicy carries the gang (targets.TrainerTarget).
        plan = replace(plan, gang_mechanism=asked)
        if policy is None:
            return GangEffect(plan)
        if not asked:
            return GangEffect(plan, findings=[_no_mechanism()])
        return GangEffect(
            plan,
            findings=_ignored_fields(
                policy,
                ("minAvailable", "priorityClass", "minResources"),
                lambda key: f"Trainer v2 gangs every pod of the TrainJob; {key} is ignored",
                lambda key: f"remove {key}, or use the operator or pods target",
            ),
        )
    operator = _operator(entry, index)
    installed = (
        operator.plugin.gang(operator.resource)
        if operator and isinstance(operator.plugin, OperatorKind)
        else None
    )
    if target == "operator" and operator is None and asked is None:
        if policy is None:
            return GangEffect(plan)
        return GangEffect(plan, findings=[_unenforced_policy(None)])
    mechanism = asked or (installed.mechanism if installed else None)
    findings: list[Finding] = []
    if target == "operator" and operator is not None:
        findings += _operator_mismatch(operator, installed, asked, policy)
    if mechanism is None:
        if policy is not None and target == "pods":
            findings.append(_unenforced_policy("pods"))
        return GangEffect(plan, findings=findings)
    scheduler = (
        installed
        if installed and installed.mechanism == mechanism
        else GangScheduler.default(mechanism)
    )
    facts = plan.gang
    if facts.unsupported or not facts.members:
        reason = facts.unsupported or "its pods come from no pod template trainjobs can mark"
        findings.append(
            UNSUPPORTED.at(f"{OPTIONS_KEY}.gang", mechanism, kind=plan.kind.kind, reason=reason)
        )
        return GangEffect(plan, findings=findings)
    findings += _coherence(entry, plan, facts, policy or {}, scheduler, target)
    if target != "pods" or any(f.severity is Severity.ERROR for f in findings):
        return GangEffect(plan, findings=findings)
    decorated = gang_templates(plan, scheduler)
    return GangEffect(decorated, [pod_group(plan, scheduler)], findings)


def _no_mechanism(target: str = "trainer") -> Finding:
    return NO_MECHANISM.at(POLICY, target=target)


def _unenforced_policy(target: str | None) -> Finding:
    if target == "pods":
        return _no_mechanism("pods")
    return OPERATOR_UNKNOWN.at(POLICY)


def _operator_mismatch(
    operator: PlatformEntry,
    installed: GangScheduler | None,
    asked: str | None,
    policy: Mapping[str, Any] | None,
) -> list[Finding]:
    if installed is None and (asked is not None or policy is not None):
        wanted = asked if asked == "volcano" else DEFAULT_COSCHEDULER if asked else "volcano"
        return [
            Finding(
                code="gang.operator_off",
                path=f"{OPTIONS_KEY}.gang" if asked else POLICY,
                message=f"{_named(operator)} runs this job without gang scheduling, so "
                + ("the job's gang option" if asked else "its schedulingPolicy")
                + " has no effect",
                value=asked if asked else NO_VALUE,
                hint=f"set spec.gangScheduler on {operator.path}: {wanted!r}, or the name "
                "of a scheduler-plugins scheduler",
                severity=Severity.WARNING,
            )
        ]
    if installed is not None and asked is not None and installed.mechanism != asked:
        return [
            TWO_MECHANISMS.at(
                f"{OPTIONS_KEY}.gang",
                asked,
                asked=asked,
                operator=_named(operator),
                installed=installed.mechanism,
            )
        ]
    return []


def _coherence(
    entry: JobEntry,
    plan: JobPlan,
    facts: GangFacts,
    policy: Mapping[str, Any],
    scheduler: GangScheduler,
    target: Target,
) -> list[Finding]:
    findings: list[Finding] = []
    members = min_member(facts, policy)
    where = f"{POLICY}.minAvailable"
    counts = " + ".join(f"{m.role} {m.pods}" for m in facts.members)
    if members > facts.pods:
        findings.append(
            GANG_TOO_BIG.at(where, members, members=members, pods=facts.pods, counts=counts)
        )
    elif members < 1:
        findings.append(EMPTY_GANG.at(where, members, default=facts.min_member))
    late = [m for m in facts.members if m.role in facts.started_late]
    early = facts.pods - sum(m.pods for m in late)
    if target == "operator" and late and early < members <= facts.pods:
        roles = ", ".join(m.role for m in late)
        findings.append(DEADLOCK.at(where, members, roles=roles, early=early, members=members))
    for ref in plan.pod_sets:
        own = (ref.template.get("spec") or {}).get("schedulerName")
        if not own or own == scheduler.scheduler_name:
            continue
        path = f"{ref.path}.spec.schedulerName"
        if facts.replace_scheduler_name:
            findings.append(SCHEDULER_REPLACED.at(path, own, scheduler=scheduler.scheduler_name))
        else:
            findings.append(
                OWN_SCHEDULER.at(
                    path,
                    own,
                    role=ref.role,
                    scheduler=scheduler.scheduler_name,
                    mechanism=scheduler.mechanism,
                )
            )
    kueue = entry.options.queue or plan.labels.get(QUEUE_LABEL)
    if scheduler.mechanism == "volcano" and policy.get("queue") and kueue:
        findings.append(
            TWO_QUEUES.at(f"{POLICY}.queue", policy["queue"], kueue=kueue, volcano=policy["queue"])
        )
    mechanism = scheduler.mechanism
    ignored = ("scheduleTimeoutSeconds",) if mechanism == "volcano" else ("queue", "priorityClass")
    return findings + _ignored_fields(
        policy,
        ignored,
        lambda key: f"a {mechanism} PodGroup has no {key}; it is ignored",
        lambda key: f"remove {key}",
    )


def _ignored_fields(
    policy: Mapping[str, Any],
    keys: Sequence[str],
    message: Callable[[str], str],
    hint: Callable[[str], str],
) -> list[Finding]:
    """Advice for each of ``keys`` the job's schedulingPolicy sets that the gang mechanism
    does not honour, its ``message`` and ``hint`` written for the field."""
    return [
        Finding(
            code="gang.ignored_field",
            path=f"{POLICY}.{key}",
            message=message(key),
            value=policy[key],
            hint=hint(key),
            severity=Severity.ADVICE,
        )
        for key in keys
        if key in policy
    ]
