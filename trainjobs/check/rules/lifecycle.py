"""Rules about how pods and jobs end: restart policies, and cleaning up finished jobs."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from trainjobs.check.crd_schema import schema_for
from trainjobs.check.rules.model import RuleContext, Violation
from trainjobs.check.rules.sites import MISSING, PodSite, get_path
from trainjobs.errors import NO_VALUE
from trainjobs.frameworks.registry import REGISTRY

__all__ = ["restart_always", "restart_framework", "restart_workload", "ttl_unset"]

# What the API server accepts as a pod template's restartPolicy, per controller.
_CONTROLLER_POLICIES: dict[tuple[str, str], tuple[str, ...]] = {
    ("batch/v1", "Job"): ("OnFailure", "Never"),
    ("batch/v1", "CronJob"): ("OnFailure", "Never"),
    ("apps/v1", "Deployment"): ("Always",),
    ("apps/v1", "StatefulSet"): ("Always",),
    ("apps/v1", "DaemonSet"): ("Always",),
    ("apps/v1", "ReplicaSet"): ("Always",),
    ("v1", "ReplicationController"): ("Always",),
}

_RUN_POLICY_TTL = "spec.runPolicy.ttlSecondsAfterFinished"


def restart_workload(site: PodSite, ctx: RuleContext) -> Iterator[Violation]:
    """A controller's pod template with a restartPolicy the API server refuses."""
    allowed = _CONTROLLER_POLICIES.get(site.owner)
    if allowed is None:
        return
    policy = site.spec.get("restartPolicy")
    if policy is None and "Always" in allowed:
        return  # the default, Always, is what these controllers need
    if policy not in allowed:
        kind = site.owner[1]
        yield Violation(
            site.at("spec.restartPolicy"),
            f"a {kind}'s pods must have restartPolicy {' or '.join(allowed)}",
            policy if policy is not None else NO_VALUE,
            f"set restartPolicy: {allowed[0]}",
        )


def restart_framework(site: PodSite, ctx: RuleContext) -> Iterator[Violation]:
    """A replica restartPolicy the job's operator does not accept."""
    framework = site.framework
    policy = site.replica_restart_policy
    if framework is None or policy is None or policy in framework.restart_policies:
        return
    yield Violation(
        site.replica_restart_path,
        f"the {framework.operator} accepts only restartPolicy "
        f"{', '.join(framework.restart_policies)} for {framework.kind.kind}",
        policy,
        f"use one of {', '.join(framework.restart_policies)}",
    )


def restart_always(site: PodSite, ctx: RuleContext) -> Iterator[Violation]:
    """Training pods that are started again after they finish."""
    if site.framework is not None:
        policy, path = site.replica_restart_policy, site.replica_restart_path
    elif site.owner == ("v1", "Pod"):
        policy, path = site.spec.get("restartPolicy"), site.at("spec.restartPolicy")
    else:
        return
    if policy == "Always":
        yield Violation(
            path,
            "restartPolicy Always starts the container again even after it exits 0, so the "
            "replica never completes and the job never succeeds",
            policy,
            "use OnFailure (retry on error) or Never",
        )


@cache
def _supports_run_policy_ttl(api_version: str, kind: str) -> bool:
    """Whether the kind's CRD has ``spec.runPolicy.ttlSecondsAfterFinished``."""
    schema = schema_for(api_version, kind)
    node: Any = schema
    for key in ("spec", "runPolicy", "ttlSecondsAfterFinished"):
        node = (node or {}).get("properties", {}).get(key) if isinstance(node, Mapping) else None
    return node is not None


def ttl_unset(manifest: Mapping[str, Any], ctx: RuleContext) -> Iterator[Violation]:
    """Finished jobs that nobody deletes."""
    kind = str(manifest.get("kind"))
    if (manifest.get("apiVersion"), kind) == ("batch/v1", "Job"):
        path = "spec.ttlSecondsAfterFinished"
    elif REGISTRY.of_document(manifest) is not None and _supports_run_policy_ttl(
        str(manifest.get("apiVersion")), kind
    ):
        path = _RUN_POLICY_TTL
    else:
        return
    if get_path(manifest, path) is not MISSING:
        return
    yield Violation(
        path,
        f"the {kind} stays in the cluster after it finishes, until someone deletes it",
        NO_VALUE,
        f"set {path.removeprefix('spec.')} (e.g. 86400) to let the cluster delete it; "
        "with Pulumi, though, the next `pulumi refresh` then forgets the job and `pulumi up` "
        "creates it again and trains again — so rather remove a finished job from the stack",
    )
