"""The trainjob Framework: the three targets through the plugin contract, and placement
or backends carried into a TrainJob as trainer fields and one runtime patch."""

from __future__ import annotations

from typing import Any

import pytest

from trainjobs.frameworks.trainjob import TrainJob
from trainjobs.frameworks.trainjob import jobset as jobset_module
from trainjobs.frameworks.trainjob.framework import FRAMEWORK, PATCH_MANAGER
from trainjobs.k8s.yamlio import dump_all
from trainjobs.plan import BackendBinding, with_backend
from trainjobs.render import render
from trainjobs.render import stack as render_module
from trainjobs.spec import parse_documents
from trainjobs.targets.jobset import jobset_objects
from trainjobs.targets.jobset_pods import pods_manifests
from trainjobs.targets.pods import PodsTarget, pod_objects

DOCUMENT: dict[str, Any] = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1",
    "kind": "TrainJob",
    "metadata": {"name": "tj", "namespace": "default"},
    "spec": {"runtimeRef": {"name": "torch-distributed"}, "trainer": {"numNodes": 2}},
}


def _job() -> TrainJob:
    return TrainJob.model_validate(DOCUMENT)


def test_targets_through_the_contract() -> None:
    job = FRAMEWORK.default(_job())
    assert FRAMEWORK.targets == ("operator", "jobset", "pods")
    assert FRAMEWORK.operator_manifest(job) == DOCUMENT
    assert FRAMEWORK.validate(job) == []
    plan, findings = FRAMEWORK.jobset(job)
    assert findings == [] and plan is not None
    assert [o["kind"] for o in jobset_objects(plan)] == ["JobSet"]
    # The framework hands the pods target the JobSet; the target expands it (a chain).
    assert not FRAMEWORK.expansion(job).objects
    made = pod_objects(FRAMEWORK.expansion(job), FRAMEWORK.plan(job))
    assert [(o["kind"], o["metadata"]["name"]) for o in made] == [
        ("Service", "tj"),
        ("Job", "tj-node-0"),
    ]
    (ref,) = FRAMEWORK.pod_templates(job)
    assert (ref.role, ref.replicas) == ("node", 2)
    assert FRAMEWORK.addresses(job) == {"master": "tj-node-0-0.tj:29500"}
    assert FRAMEWORK.gang_facts(job, tuple(FRAMEWORK.pod_templates(job))).unsupported


def test_placement_becomes_resources_per_node_and_a_runtime_patch() -> None:
    job = _job()
    (ref,) = FRAMEWORK.pod_templates(job)
    placed = {**ref.template}
    spec = dict(placed["spec"])
    spec["nodeSelector"] = {"pool": "a100"}
    spec["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    node = {**spec["containers"][0], "resources": {"limits": {"nvidia.com/gpu": 8}}}
    spec["containers"] = [node]
    placed["spec"] = spec
    changed = FRAMEWORK.with_templates(job, {"node": placed})
    assert isinstance(changed, TrainJob)
    assert changed.spec.trainer is not None
    assert changed.spec.trainer.resources_per_node == {"limits": {"nvidia.com/gpu": 8}}
    (patch,) = changed.spec.runtime_patches or []
    assert patch.manager == PATCH_MANAGER
    assert FRAMEWORK.validate(changed) == []
    jobset = FRAMEWORK.jobset(changed)[0]
    assert jobset is not None
    pod = jobset.spec["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"pool": "a100"}
    assert pod["tolerations"] == spec["tolerations"]
    assert pod["containers"][0]["resources"] == {"limits": {"nvidia.com/gpu": "8"}}
    env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
    assert env["PET_NPROC_PER_NODE"] == "auto" and env["PET_NNODES"] == "2"


def test_an_edit_of_the_plan_keeps_the_template_as_written() -> None:
    # The plan is not planned again from the edited TrainJob, whose runtime's JobSet
    # spells the GPU count as the Trainer writes it ("8"): the pod set keeps the int.
    job = FRAMEWORK.default(_job())
    plan = FRAMEWORK.plan(job)
    (ref,) = plan.pod_sets
    gpus = {"limits": {"nvidia.com/gpu": 8}}
    node = {**ref.template["spec"]["containers"][0], "resources": gpus}
    placed = {**ref.template, "spec": {**ref.template["spec"], "containers": [node]}}
    edited = plan.with_templates({"node": placed})
    pod_set = edited.pod_set("node")
    assert pod_set is not None and pod_set.template["spec"]["containers"][0]["resources"] == gpus
    written = FRAMEWORK.written(job, edited)
    assert written.spec.trainer is not None and written.spec.trainer.resources_per_node == gpus
    assert FRAMEWORK.written(job, plan) is job


def test_a_backend_env_goes_to_trainer_env() -> None:
    job = _job()
    binding = BackendBinding("redis", "cache", env=({"name": "REDIS_HOST", "value": "r"},))
    changed = FRAMEWORK.written(job, FRAMEWORK.plan(job).with_backend(binding))
    assert isinstance(changed, TrainJob) and changed.spec.trainer is not None
    assert changed.spec.trainer.env == [{"name": "REDIS_HOST", "value": "r"}]
    assert changed.spec.runtime_patches is None
    assert with_backend({"spec": {"containers": [{"name": "node"}]}}, binding)


def test_pods_findings_point_at_the_runtime_ref() -> None:
    job = TrainJob.model_validate(
        {**DOCUMENT, "spec": {"runtimeRef": {"name": "torchtune-llama3.2-1b"}}}
    )
    # The pods target says what it cannot do as JobSet would, where the plan points.
    assert FRAMEWORK.pods_findings(job) == []
    plan = FRAMEWORK.plan(job).for_target(FRAMEWORK.target_input(job, "pods"))
    _, (finding,) = PodsTarget().render(plan)
    assert finding.code == "trainjob.pods_depends_on" and finding.path == "spec.runtimeRef"
    assert finding.message.startswith(
        "runtime 'torchtune-llama3.2-1b' spec.template.spec.replicatedJobs[2].dependsOn: "
    )


def test_the_plan_names_what_owns_the_pods_and_the_framework_knows_no_queue() -> None:
    labels = {"kueue.x-k8s.io/queue-name": "team-a"}
    metadata = {**DOCUMENT["metadata"], "labels": labels}
    job = FRAMEWORK.default(TrainJob.model_validate({**DOCUMENT, "metadata": metadata}))
    plan = FRAMEWORK.plan(job)
    owners = {t: plan.pod_owner(t) for t in FRAMEWORK.targets}
    assert owners == {"operator": "resource", "jobset": "jobset", "pods": "jobs"}
    # What a queue puts on the JobSet or its Jobs is the plan's admission, applied by
    # the target: the framework's own objects carry no label the TrainJob has.
    jobset_plan = FRAMEWORK.jobset(job)[0]
    assert jobset_plan is not None and FRAMEWORK.expansion(job).jobset == jobset_plan
    (jobset,) = jobset_objects(jobset_plan)
    assert "kueue.x-k8s.io/queue-name" not in jobset["metadata"].get("labels", {})
    (_, made) = pods_manifests(jobset)
    assert "kueue.x-k8s.io/queue-name" not in made["metadata"]["labels"]
    assert made["spec"]["suspend"] is False
    assert plan.unadmitted_warning is None
    suspended = FRAMEWORK.default(
        TrainJob.model_validate({**DOCUMENT, "spec": {**DOCUMENT["spec"], "suspend": True}})
    )
    warning = FRAMEWORK.plan(suspended).unadmitted_warning
    assert warning is not None and warning.code == "trainjob.pods_suspended"


def test_a_render_builds_each_jobs_jobset_once_and_the_same_as_without_the_memo(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # More jobs than any small cache holds: the pod guard plans them all before the
    # first is validated and expanded, each of which needs the JobSet again.
    docs = [
        {**DOCUMENT, "metadata": {"name": f"tj-{i}", "namespace": "default"}} for i in range(40)
    ]
    stack = parse_documents(docs)
    built: list[str] = []
    build = jobset_module._jobset_plan

    def counted(job: TrainJob, runtime: Any) -> Any:
        built.append(job.name)
        return build(job, runtime)

    monkeypatch.setattr(jobset_module, "_jobset_plan", counted)
    remembered = dump_all(render(stack, "jobset").manifests)
    assert sorted(built) == sorted(f"tj-{i}" for i in range(40))
    # Without the render's scope each part builds the JobSet afresh: the same output.
    unscoped = render_module._render(stack, "jobset", None, None)
    assert len(built) > 80
    assert dump_all(unscoped.manifests) == remembered
