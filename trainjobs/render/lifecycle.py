"""How long ``pulumi up`` waits for each object of a job.

The Kubernetes provider waits up to 10 minutes for a Pod to be Ready and for a
batch Job to complete, and fails the update when they do not. A training pod can
wait longer than that for a GPU node, and a training Job runs for hours, so by
default trainjobs tells the provider not to wait for them (``pulumi.com/skipAwait``).
A job can ask for more with ``trainjobs: {wait: running|succeeded, waitTimeout: 2h}``:
its pods are awaited, or its custom resource is watched for the operator's
``Running``/``Succeeded`` condition (``pulumi.com/waitFor``), with that timeout.

The decision is data on each rendered object; the components turn it into
annotations and custom timeouts, so ``trainjobs render`` output stays free of
Pulumi-only annotations.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from trainjobs.errors import Finding
from trainjobs.plan import JobPlan, RunRules
from trainjobs.plan.trainer import TRAINJOB_KIND
from trainjobs.spec.entry import OPTIONS_KEY, Wait

__all__ = ["DEFAULT_WAIT_TIMEOUT", "Lifecycle", "base_lifecycle", "job_lifecycle"]

DEFAULT_WAIT_TIMEOUT = "60m"
"""How long a job that asks to be waited for is waited for, unless it says otherwise."""

SKIP_AWAIT = "pulumi.com/skipAwait"
WAIT_FOR = "pulumi.com/waitFor"


@dataclass(frozen=True)
class Lifecycle:
    """What ``pulumi up`` does after creating one object.

    Attributes:
        skip_await: do not wait for the object at all.
        wait_for: a ``pulumi.com/waitFor`` expression (``condition=Running``), or empty.
        timeout: how long to wait (``60m``), or empty for the provider's default.
        after: names of batch Jobs of the same job this object is created after, once
            each has completed (JobSet's ``dependsOn: Complete``, which on the pods
            target no controller keeps); default none.
    """

    skip_await: bool = False
    wait_for: str = ""
    timeout: str = ""
    after: tuple[str, ...] = ()

    def annotations(self) -> dict[str, str]:
        """The Pulumi annotations that carry this decision."""
        out = {}
        if self.skip_await:
            out[SKIP_AWAIT] = "true"
        if self.wait_for:
            out[WAIT_FOR] = self.wait_for
        return out


TRAINJOB_CONDITIONS = {"succeeded": "Complete"}
"""The TrainJob's own conditions (Trainer v2: ``Suspended``, ``Complete``, ``Failed``):
the ``trainer`` target waits on those, not on the framework's v1 kind, which does not
exist there. There is no ``Running`` condition to wait for. A ``Failed`` TrainJob ends
no wait (``pulumi.com/waitFor`` takes one condition): the update fails at the timeout."""

NO_WAIT = Lifecycle(skip_await=True)
DEFAULT = Lifecycle()


def base_lifecycle(manifest: Mapping[str, Any]) -> Lifecycle:
    """The lifecycle of an object nothing asked anything of.

    Services are not awaited: the provider waits for a Service to select a ready
    pod, but a unit creates its Services before its pods (see
    ``components.platform.register_objects``), so that wait could only time out.
    Readiness is awaited on the workloads themselves (a backend's Deployment).
    """
    return NO_WAIT if manifest.get("kind") == "Service" else DEFAULT


REPLICATED_JOB = "jobset.sigs.k8s.io/replicatedjob-name"
"""The label JobSet puts on each Job it creates: the replicated job it belongs to."""


@dataclass(frozen=True)
class _Order:
    awaited: frozenset[str] = frozenset()
    after: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def _jobset_order(
    manifests: Sequence[Mapping[str, Any]], run_rules: Callable[[], RunRules | None]
) -> _Order:
    """On the pods target of a job JobSet runs: the Jobs others wait for to complete
    (awaited), and for each Job those it is created after. JobSet's ``dependsOn:
    Ready`` cannot be kept this way (the provider awaits a Job's completion only)."""
    by_role: dict[str, list[str]] = {}
    for manifest in manifests:
        meta = manifest.get("metadata") or {}
        role = (meta.get("labels") or {}).get(REPLICATED_JOB)
        if manifest.get("kind") == "Job" and role is not None:
            by_role.setdefault(str(role), []).append(str(meta.get("name")))
    rules = run_rules() if by_role else None
    if rules is None:
        return _Order()
    waits: dict[str, set[str]] = {}
    for replica in rules.replicas:
        for role, status in replica.depends_on:
            if status == "Complete":
                waits.setdefault(replica.role, set()).add(role)
    awaited = {name for roles in waits.values() for role in roles for name in by_role.get(role, [])}
    after = {
        name: tuple(n for role in sorted(waits[dependent]) for n in by_role.get(role, []))
        for dependent, names in by_role.items()
        if dependent in waits
        for name in names
    }
    return _Order(frozenset(awaited), after)


def job_lifecycle(
    manifests: Sequence[Mapping[str, Any]],
    plan: JobPlan,
    wait: Wait,
    timeout: str | None,
    path: str,
    run_rules: Callable[[], RunRules | None],
) -> tuple[list[Lifecycle], list[Finding]]:
    """The lifecycle of each of a job's objects, in order, and why ``wait`` cannot be met.

    ``run_rules`` asks the job's framework for its replicas' rules
    (``Framework.run_rules``): they list every pod, so only a job whose JobSet's Jobs
    wait on one another asks."""
    limit = timeout or DEFAULT_WAIT_TIMEOUT
    # A job's own object: its framework's kind (operator target), or a TrainJob (trainer).
    own_kinds = {
        (plan.kind.api_version, plan.kind.kind): plan.status_conditions,
        (TRAINJOB_KIND.api_version, TRAINJOB_KIND.kind): TRAINJOB_CONDITIONS,
    }
    order = _jobset_order(manifests, run_rules)
    out: list[Lifecycle] = []
    can_succeed = False
    cannot_run = False
    for manifest in manifests:
        kind = str(manifest.get("kind"))
        key = (str(manifest.get("apiVersion")), kind)
        if key in own_kinds:
            conditions = own_kinds[key]
            condition = conditions.get(wait, "") if wait != "none" else ""
            out.append(
                Lifecycle(wait_for=f"condition={condition}", timeout=limit)
                if condition
                else DEFAULT
            )
            can_succeed = can_succeed or bool(conditions.get("succeeded"))
            cannot_run = cannot_run or (wait == "running" and not condition)
        elif kind == "Pod":
            out.append(Lifecycle(timeout=limit) if wait == "running" else NO_WAIT)
        elif kind == "Job" and key[0] == "batch/v1":
            # A Job's own await is its completion: the right thing for "succeeded", and
            # for a Job others wait for.
            name = str((manifest.get("metadata") or {}).get("name"))
            awaited = wait == "succeeded" or name in order.awaited
            out.append(
                replace(
                    Lifecycle(timeout=limit) if awaited else NO_WAIT,
                    after=order.after.get(name, ()),
                )
            )
            can_succeed = True
        else:
            out.append(base_lifecycle(manifest))
    findings = []
    if wait == "succeeded" and not can_succeed:
        findings.append(
            Finding(
                code="wait.succeeded",
                path=f"{path}.{OPTIONS_KEY}.wait",
                message=(
                    "nothing among this job's objects reports the job's success, so "
                    "`pulumi up` cannot wait for it"
                ),
                value=wait,
                hint="use the operator target, whose custom resource reports success, "
                "or wait: running",
            )
        )
    if cannot_run:
        findings.append(
            Finding(
                code="wait.running",
                path=f"{path}.{OPTIONS_KEY}.wait",
                message="this job's object reports no Running condition, so `pulumi up` "
                "cannot wait for it to run",
                value=wait,
                hint="use wait: succeeded (waits for the TrainJob's Complete condition) "
                "or wait: none",
            )
        )
    return out, findings
