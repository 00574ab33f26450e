"""TrainingJob rules: the upstream fault-tolerance rule and trainjobs' own, with exact messages."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.paths import DATA
from trainjobs.check import run
from trainjobs.check.rules import RULES
from trainjobs.errors import SpecError
from trainjobs.k8s.yamlio import load_all
from trainjobs.spec import parse_documents


def _doc(**spec: Any) -> dict[str, Any]:
    doc: dict[str, Any] = load_all(
        (DATA / "paddle-edl" / "fit_a_line-examplejob.yaml").read_text()
    )[0]
    del doc["spec"]["trainer"]["passes"]
    for key, value in spec.items():
        doc["spec"][key] = value
    return doc


def _errors(doc: dict[str, Any], target: str = "pods") -> list[str]:
    with pytest.raises(SpecError) as info:
        run(parse_documents([doc]), target=target)  # type: ignore[arg-type]
    return [f.render() for f in info.value.errors]


def _warnings(doc: dict[str, Any]) -> list[str]:
    """The framework's warnings and advice; the check rules (upstream's images are
    unpinned …) have tests of their own."""
    findings = run(parse_documents([doc]), target="pods").findings
    return [f.render() for f in findings if RULES.get(f.code) is None]


def test_a_clean_job_has_no_findings() -> None:
    assert _warnings(_doc()) == []


def test_elastic_needs_fault_tolerance() -> None:
    assert _errors(_doc(fault_tolerant=False)) == [
        "error: jobs[0].spec.trainer.max-instance: max-instance must equal min-instance when "
        "fault_tolerant is false: only a fault-tolerant job survives trainers being added and "
        "removed (got 10); fix: set spec.fault_tolerant: true to let EDL scale the trainers, "
        "or max-instance: 2"
    ]


def test_fault_tolerance_omitted_counts_as_false() -> None:
    doc = _doc()
    del doc["spec"]["fault_tolerant"]
    assert [e.split(":")[1].strip() for e in _errors(doc)] == ["jobs[0].spec.trainer.max-instance"]


def test_entrypoint_is_required() -> None:
    doc = _doc()
    del doc["spec"]["trainer"]["entrypoint"]
    assert _errors(doc) == [
        'error: jobs[0].spec.trainer.entrypoint: every trainer runs this command (sh -c "$ENTRY"); '
        "without it the trainers do nothing; fix: set e.g. entrypoint: python train.py"
    ]


def test_min_instance_must_be_positive() -> None:
    doc = _doc()
    doc["spec"]["pserver"]["min-instance"] = 0
    assert _errors(doc) == [
        "error: jobs[0].spec.pserver.min-instance: input should be greater than or equal to 1 "
        "(got 0); fix: change the number to fit the bound"
    ]


def test_ports_must_stay_below_65536() -> None:
    assert _errors(_doc(port=65535)) == [
        "error: jobs[0].spec.port: the job's ports run from 65535 to 65536, past 65535 "
        "(got 65535); fix: choose a lower port or fewer ports_num/ports_num_for_sparse"
    ]


def test_bad_and_negative_quantities() -> None:
    doc = _doc()
    doc["spec"]["trainer"]["resources"] = {"requests": {"cpu": "lots", "memory": "-1Gi"}}
    assert _errors(doc) == [
        "error: jobs[0].spec.trainer.resources.requests.cpu: not a Kubernetes quantity "
        "(got 'lots'); fix: write a quantity such as 2, 500m or 4Gi",
        "error: jobs[0].spec.trainer.resources.requests.memory: a quantity cannot be negative "
        "(got '-1Gi'); fix: write a quantity such as 2, 500m or 4Gi",
    ]


def test_gpus_named_twice() -> None:
    doc = _doc()
    doc["spec"]["trainer"]["resources"] = {
        "limits": {"nvidia.com/gpu": 1, "alpha.kubernetes.io/nvidia-gpu": 1, "cpu": 1}
    }
    assert _errors(doc) == [
        "error: jobs[0].spec.trainer.resources.limits: GPUs are named twice (nvidia.com/gpu and "
        "the legacy alpha.kubernetes.io/nvidia-gpu) (got ['alpha.kubernetes.io/nvidia-gpu', "
        "'nvidia.com/gpu']); fix: keep nvidia.com/gpu"
    ]


def test_volume_mounts_need_their_volume() -> None:
    doc = _doc(VolumeMounts=[{"name": "data", "mountPath": "/data"}])
    assert _errors(doc) == [
        "error: jobs[0].spec.VolumeMounts[0].name: no volume in spec.volumes has this name "
        "(got 'data'); fix: add the volume to spec.volumes or fix the name"
    ]


def test_job_name_must_be_a_dns_label() -> None:
    doc = _doc()
    doc["metadata"]["name"] = "Example_Job"
    (error,) = _errors(doc)
    assert error.startswith("error: jobs[0].metadata.name: the job name ")
    assert error.endswith(
        "(got 'Example_Job'); fix: rename the job; its pods carry it as the label paddle-job=<name>"
    )


def test_misplaced_passes_is_a_warning_naming_the_real_value() -> None:
    doc = _doc(passes=7)
    doc["spec"]["trainer"]["passes"] = 50
    assert _warnings(doc) == [
        "warning: jobs[0].spec.trainer.passes: the controller never read passes here (the "
        "upstream examples put it here by mistake); the job runs spec.passes, which is 7 "
        "(got 50); fix: move it to spec.passes"
    ]


def test_unused_fields_are_advice() -> None:
    doc = _doc(master={"etcd-endpoint": "http://etcd:2379"})
    doc["spec"]["pserver"]["max-instance"] = 4
    assert _warnings(doc) == [
        "advice: jobs[0].spec.master.etcd-endpoint: never read: the job uses the etcd in its "
        "master pod (got 'http://etcd:2379'); fix: remove it",
        "advice: jobs[0].spec.pserver.max-instance: never read: parameter servers do not scale "
        "(got 4); fix: remove it or set it to min-instance (2)",
    ]


def test_max_below_min_and_no_cpu_are_warnings() -> None:
    doc = _doc()
    doc["spec"]["trainer"]["max-instance"] = 1
    doc["spec"]["trainer"]["resources"] = {"requests": {"memory": "1Gi"}}
    assert _warnings(doc) == [
        "warning: jobs[0].spec.trainer.max-instance: max-instance is below min-instance (2), so "
        "the job is not elastic (got 1); fix: set max-instance to 2 or more",
        "warning: jobs[0].spec.trainer.resources: the trainers ask for no CPU, so "
        "PADDLE_INIT_TRAINER_COUNT is 0; fix: set resources.requests.cpu (the CPUs, rounded up, "
        "become the trainer count)",
    ]


def test_unknown_field_suggests_the_upstream_spelling() -> None:
    doc = _doc()
    doc["spec"]["trainer"]["minInstance"] = 2
    assert _errors(doc) == [
        "error: jobs[0].spec.trainer.minInstance: unknown field (got 2); "
        "fix: did you mean 'min-instance'?"
    ]


def test_every_error_comes_at_once() -> None:
    doc = _doc(fault_tolerant=False, port=65535)
    del doc["spec"]["trainer"]["entrypoint"]
    assert len(_errors(doc)) == 3
