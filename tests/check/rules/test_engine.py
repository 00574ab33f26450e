"""The rule set inside every render: errors fail, warnings print, ignores silence."""

from __future__ import annotations

from typing import Any

import pytest

from trainjobs.check import run
from trainjobs.check.rules import ignored_by
from trainjobs.errors import Severity, SpecError
from trainjobs.render import IGNORE_ANNOTATION
from trainjobs.spec import parse_documents, parse_stack

RESOURCES = {"requests": {"cpu": "8", "memory": "32Gi"}, "limits": {"nvidia.com/gpu": 8}}


def _rdma_job(**options: Any) -> dict[str, Any]:
    container = {
        "name": "pytorch",
        "image": "ghcr.io/example/llm:3.1",
        "resources": RESOURCES,
        "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}},
    }
    doc: dict[str, Any] = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "llm", "namespace": "training"},
        "spec": {
            "runPolicy": {"ttlSecondsAfterFinished": 600},
            "pytorchReplicaSpecs": {
                "Worker": {
                    "replicas": 4,
                    "template": {"spec": {"hostNetwork": True, "containers": [container]}},
                }
            },
        },
    }
    if options:
        doc["trainjobs"] = options
    return doc


def test_an_rdma_job_is_named_as_needing_the_privileged_level() -> None:
    with pytest.raises(SpecError) as caught:
        run(parse_documents([_rdma_job()], source="llm.yaml"), target="pods")
    assert [f.render() for f in caught.value.findings] == [
        "error: llm.yaml: jobs[0].spec.pytorchReplicaSpecs.Worker.template.spec.hostNetwork: "
        "hostNetwork: true shares the node's network (NCCL over RoCE/InfiniBand without an "
        "RDMA-aware network plugin does this); job training/llm needs the privileged Pod "
        "Security level (got True); fix: remove it; if the job needs it, run the job in a "
        "namespace labelled pod-security.kubernetes.io/enforce=privileged and add "
        "`trainjobs: {ignore: [pss.baseline.host_namespaces]}`",
        "error: llm.yaml: jobs[0].spec.pytorchReplicaSpecs.Worker.template.spec.containers[0]"
        ".securityContext.capabilities.add[0]: container 'pytorch' adds capability IPC_LOCK "
        "(pins memory for RDMA (InfiniBand, RoCE, GPUDirect)), beyond the baseline set; job "
        "training/llm needs the privileged Pod Security level (got 'IPC_LOCK'); fix: remove "
        "it; if the job needs it, run the job in a namespace labelled "
        "pod-security.kubernetes.io/enforce=privileged and add "
        "`trainjobs: {ignore: [pss.baseline.capabilities]}`",
    ]


@pytest.mark.parametrize("target", ["operator", "pods"])
def test_ignoring_per_job_silences_and_annotates_every_object(target: str) -> None:
    ignore = ["pss.baseline.capabilities", "pss.baseline.host_namespaces"]
    rendering = run(parse_documents([_rdma_job(ignore=ignore)]), target=target)  # type: ignore[arg-type]
    assert rendering.findings == ()
    for manifest in rendering.manifests:
        assert manifest["metadata"]["annotations"][IGNORE_ANNOTATION] == ",".join(ignore)
        assert ignored_by(manifest) == ignore


def test_ignoring_a_group_per_stack() -> None:
    config = {"trainjobs:jobs": [_rdma_job()], "trainjobs:ignore": ["pss.baseline"]}
    rendering = run(parse_stack(config), target="pods")
    assert rendering.findings == ()
    assert all("annotations" not in m["metadata"] for m in rendering.manifests)


def test_unknown_ignore_codes_are_errors_with_a_suggestion() -> None:
    config = {
        "trainjobs:jobs": [_rdma_job(ignore=["pss.baseline", "image.unpined"])],
        "trainjobs:ignore": ["nothing"],
    }
    with pytest.raises(SpecError) as caught:
        run(parse_stack(config, source="Pulumi.x.yaml"))
    assert [f.render() for f in caught.value.findings] == [
        "error: Pulumi.x.yaml: jobs[0].trainjobs.ignore[1]: no check rule has this code "
        "(got 'image.unpined'); fix: did you mean image.unpinned?",
        "error: Pulumi.x.yaml: trainjobs:ignore[0]: no check rule has this code (got "
        "'nothing'); fix: `trainjobs check --list-rules` lists them",
    ]


def test_the_profile_comes_from_the_stack_or_the_caller() -> None:
    job = _rdma_job(ignore=["pss.baseline"])
    restricted = parse_stack({"trainjobs:jobs": [job], "trainjobs:podSecurity": "restricted"})
    with pytest.raises(SpecError) as caught:
        run(restricted)
    assert {f.code for f in caught.value.findings} == {
        "pss.restricted.privilege_escalation",
        "pss.restricted.run_as_non_root",
        "pss.restricted.seccomp",
        "pss.restricted.capabilities",
    }
    assert run(restricted, profile="baseline").findings == ()


def test_warnings_and_advice_come_back_with_the_rendering() -> None:
    job = _rdma_job(ignore=["pss.baseline"])
    del job["spec"]["runPolicy"]
    job["spec"]["pytorchReplicaSpecs"]["Worker"]["restartPolicy"] = "Always"
    rendering = run(parse_documents([job]))
    assert [(f.severity, f.code, f.path) for f in rendering.findings] == [
        (
            Severity.WARNING,
            "restart.always",
            "jobs[0].spec.pytorchReplicaSpecs.Worker.restartPolicy",
        ),
        (Severity.ADVICE, "ttl.unset", "jobs[0].spec.runPolicy.ttlSecondsAfterFinished"),
    ]


def test_a_bad_pod_security_level_in_the_stack() -> None:
    with pytest.raises(SpecError) as caught:
        parse_stack({"trainjobs:podSecurity": "strict", "trainjobs:ignore": "all"}, source="s.yaml")
    assert [f.render() for f in caught.value.findings] == [
        "error: s.yaml: trainjobs:podSecurity: unknown Pod Security Standards level (got "
        "'strict'); fix: use one of baseline, restricted",
        "error: s.yaml: trainjobs:ignore: ignore must be a list of check rule codes (got 'all'); "
        "fix: e.g. ignore: [image.unpinned]; `trainjobs check --list-rules` lists the codes",
    ]
