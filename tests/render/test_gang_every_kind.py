"""Gang scheduling works for every framework through the Framework contract alone.

Every example job of every kind, on the pods target with ``gang: volcano``, gets one
PodGroup whose ``minMember`` is the framework's own rule, and every pod it renders
(bare Pods and the pod templates of Jobs) is a member; on the operator target nothing
but the custom resource is rendered.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.paths import example_job_files
from trainjobs.check import run
from trainjobs.errors import SpecError
from trainjobs.frameworks.base import operator_rules
from trainjobs.plan import GangFacts
from trainjobs.spec import JobEntry, PlatformEntry, StackSpec, load_path

_PLATFORM: dict[str, tuple[PlatformEntry, ...]] = {}


def _cases() -> list[JobEntry]:
    entries = []
    for path in example_job_files():
        stack = load_path(path)
        for entry in stack.jobs:
            if "pods" in entry.framework.targets:
                _PLATFORM[f"{entry.source}:{entry.path}"] = stack.platform
                entries.append(entry)
    return entries


def _pods(manifests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    pods = [m for m in manifests if m["kind"] == "Pod"]
    pods += [m["spec"]["template"] for m in manifests if m["kind"] == "Job"]
    return pods


def _with_gang(entry: JobEntry) -> StackSpec:
    options = entry.options.model_copy(update={"gang": "volcano", "target": None})
    job = JobEntry(entry.job, entry.framework, options, entry.path, entry.source)
    return StackSpec(jobs=(job,), platform=_PLATFORM[f"{entry.source}:{entry.path}"])


def _facts(entry: JobEntry) -> GangFacts:
    framework = entry.framework
    job = framework.default(entry.job)
    plan = framework.plan(job)
    return plan.with_rules(operator_rules(framework, job, plan)).gang


def _ganged(entry: JobEntry) -> bool:
    facts = _facts(entry)
    return bool(facts.members) and not facts.unsupported


@pytest.mark.parametrize("entry", _cases(), ids=lambda e: f"{e.framework.name}-{e.job.name}")
def test_every_kind_is_gang_scheduled_on_the_pods_target(entry: JobEntry) -> None:
    if not _ganged(entry):
        # The EDL controller builds its pods from the job's own fields, not templates;
        # the MS operator overrides every pod's scheduler with spec.schedulerName.
        with pytest.raises(SpecError) as err:
            run(_with_gang(entry), target="pods")
        assert [f.code for f in err.value.errors] == ["gang.unsupported"]
        return
    rendering = run(_with_gang(entry), target="pods")
    manifests = [o.manifest for o in rendering.jobs[0].objects]
    (group,) = [m for m in manifests if m["kind"] == "PodGroup"]
    job, plan = rendering.jobs[0].job, rendering.jobs[0].plan
    facts, policy = plan.gang, plan.scheduling_policy or {}
    assert group["spec"]["minMember"] == policy.get("minAvailable", facts.min_member)
    pods = _pods(manifests)
    assert pods
    for pod in pods:
        assert pod["spec"]["schedulerName"] == "volcano"
        assert pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == job.name
    assert not [f for f in rendering.findings if f.code.startswith("schema")]


@pytest.mark.parametrize("entry", _cases(), ids=lambda e: f"{e.framework.name}-{e.job.name}")
def test_on_the_operator_target_the_operator_does_it(entry: JobEntry) -> None:
    facts = _facts(entry)
    if not facts.members or facts.unsupported or facts.started_late:
        # No templates to mark (EDL), or a launcher the operator holds back until the
        # workers are Ready (MPI WaitForWorkersReady): refused with a finding.
        with pytest.raises(SpecError) as err:
            run(_with_gang(entry), target="operator")
        assert [f.code for f in err.value.errors] in (["gang.unsupported"], ["gang.deadlock"])
        return
    (job,) = run(_with_gang(entry), target="operator").jobs
    assert [o.manifest["kind"] for o in job.objects] == [entry.framework.kind.kind]
