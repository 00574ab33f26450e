"""Stack rule (check.crd_claims): two jobs needing one CRD at two versions (operator target)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from trainjobs.check import run
from trainjobs.check.crd_claims import crd_claim_findings
from trainjobs.errors import SpecError
from trainjobs.frameworks.registry import REGISTRY
from trainjobs.k8s.yamlio import dump_all
from trainjobs.render import render
from trainjobs.spec import load_path, parse_documents
from trainjobs.spec.stack import StackSpec


def _mpijob(api_version: str, name: str, target: str | None = None) -> dict[str, Any]:
    resources = {"requests": {"cpu": "1", "memory": "1Gi"}}
    container = {"name": "mpi", "image": "horovod/horovod:0.28.1", "resources": resources}
    replica = {"replicas": 1, "template": {"spec": {"containers": [container]}}}
    doc: dict[str, Any] = {
        "apiVersion": api_version,
        "kind": "MPIJob",
        "metadata": {"name": name, "namespace": "training"},
        # A finished job is cleaned up, so no check rule has advice for these jobs.
        "spec": {
            "mpiReplicaSpecs": {"Launcher": replica, "Worker": replica},
            "runPolicy": {"ttlSecondsAfterFinished": 3600},
        },
    }
    if target:
        doc["trainjobs"] = {"target": target}
    return doc


V2 = "kubeflow.org/v2beta1"
V1 = "kubeflow.org/v1"


def test_the_two_mpijob_frameworks_share_a_crd_name_at_different_versions() -> None:
    pair = [fw for fw in REGISTRY if fw.kind.kind == "MPIJob"]
    assert {fw.kind.crd_name for fw in pair} == {"mpijobs.kubeflow.org"}
    assert sorted(fw.kind.api_version for fw in pair) == [V1, V2]


def test_both_on_the_operator_target_is_an_error_naming_both_jobs() -> None:
    stack = parse_documents([_mpijob(V2, "horovod"), _mpijob(V1, "pi")], source="jobs.yaml")
    with pytest.raises(SpecError) as caught:
        run(stack)
    assert [f.render() for f in caught.value.findings] == [
        "error: jobs.yaml: jobs[1]: MPIJob training/pi (kubeflow.org/v1, Training Operator "
        "v1.9.4) and jobs[0], MPIJob training/horovod (kubeflow.org/v2beta1, MPI Operator "
        "v0.8), both need the CRD mpijobs.kubeflow.org on the operator target, but a cluster "
        "serves it at one version only (got 'kubeflow.org/v1'); fix: render one of them with "
        "`trainjobs: {target: pods}` (no operator or CRD needed), or put them in stacks for "
        "different clusters"
    ]


def test_one_of_them_on_the_pods_target_is_fine() -> None:
    stack = parse_documents([_mpijob(V2, "horovod"), _mpijob(V1, "pi", target="pods")])
    assert run(stack).findings == ()
    assert run(stack, target="pods").findings == ()


def test_every_job_at_another_version_is_reported_once() -> None:
    docs = [_mpijob(V1, "a"), _mpijob(V1, "b"), _mpijob(V2, "c"), _mpijob(V2, "d")]
    findings = crd_claim_findings(render(parse_documents(docs)).units)
    assert [(f.code, f.path) for f in findings] == [
        ("crd.version_conflict", "jobs[2]"),
        ("crd.version_conflict", "jobs[3]"),
    ]
    assert all("jobs[0], MPIJob training/a" in f.message for f in findings)


def test_the_first_job_is_named_with_its_file_when_files_differ(tmp_path: Path) -> None:
    (tmp_path / "v2.yaml").write_text(dump_all([_mpijob(V2, "horovod")]))
    (tmp_path / "v1.yaml").write_text(dump_all([_mpijob(V1, "pi")]))
    stack_file = tmp_path / "Pulumi.mpi.yaml"
    stack_file.write_text("config:\n  trainjobs:jobs:\n    - file: v2.yaml\n    - file: v1.yaml\n")
    stack = load_path(stack_file)
    findings = crd_claim_findings(render(stack).units)
    assert len(findings) == 1
    assert f"jobs[0] in {tmp_path / 'v2.yaml'}" in findings[0].message
    assert findings[0].source == str(tmp_path / "v1.yaml")


def test_same_version_twice_is_fine() -> None:
    stack = parse_documents([_mpijob(V2, "a"), _mpijob(V2, "b")])
    assert crd_claim_findings(render(stack).units) == []


def test_empty_stack() -> None:
    assert crd_claim_findings(render(StackSpec()).units) == []
