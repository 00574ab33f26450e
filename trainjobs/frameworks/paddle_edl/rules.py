"""The rules a TrainingJob must follow, as findings.

The one rule upstream wrote — "max-instances should equal to min-instances when
fault_tolerant is disabled" — was never called by the TPR controller (the CRD
variant did call it); trainjobs enforces it. The others catch what would make
the API server refuse the pods, or what upstream silently ignored.
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction

from trainjobs.errors import Finding, Severity
from trainjobs.frameworks.paddle_edl.model import ResourceRequirements, TrainingJob
from trainjobs.frameworks.paddle_edl.quantities import (
    GPU_NAMES,
    BadQuantity,
    gpu_amount,
    quantity,
)
from trainjobs.k8s.names import dns1123_label_problem

__all__ = ["job_findings"]


def job_findings(job: TrainingJob) -> list[Finding]:
    """Every rule broken by a (defaulted) TrainingJob; paths relative to the document."""
    return [
        *_name(job),
        *_trainer(job),
        *_ports(job),
        *_resources(job),
        *_mounts(job),
        *_ignored(job),
    ]


def _name(job: TrainingJob) -> Iterator[Finding]:
    problem = dns1123_label_problem(job.name)
    if problem:
        yield Finding(
            code="name.dns1123",
            path="metadata.name",
            message=f"the job name {problem}",
            value=job.name,
            hint="rename the job; its pods carry it as the label paddle-job=<name>",
        )


def _trainer(job: TrainingJob) -> Iterator[Finding]:
    trainer = job.spec.trainer
    if not trainer.entrypoint:
        yield Finding(
            code="edl.entrypoint",
            path="spec.trainer.entrypoint",
            message='every trainer runs this command (sh -c "$ENTRY"); without it the '
            "trainers do nothing",
            hint="set e.g. entrypoint: python train.py",
        )
    low, high = trainer.min_instance, trainer.max_instance
    if high is None or high == 0:
        return
    if high > low and not job.spec.fault_tolerant:
        yield Finding(
            code="edl.elastic_needs_fault_tolerance",
            path="spec.trainer.max-instance",
            message="max-instance must equal min-instance when fault_tolerant is false: "
            "only a fault-tolerant job survives trainers being added and removed",
            value=high,
            hint=f"set spec.fault_tolerant: true to let EDL scale the trainers, "
            f"or max-instance: {low}",
        )
    if high < low:
        yield Finding(
            code="edl.max_below_min",
            path="spec.trainer.max-instance",
            message=f"max-instance is below min-instance ({low}), so the job is not elastic",
            value=high,
            hint=f"set max-instance to {low} or more",
            severity=Severity.WARNING,
        )


def _ports(job: TrainingJob) -> Iterator[Finding]:
    spec = job.spec
    first = spec.port or 0
    last = first + (spec.ports_num or 0) + (spec.ports_num_for_sparse or 0) - 1
    if last > 65535:
        yield Finding(
            code="edl.ports",
            path="spec.port",
            message=f"the job's ports run from {first} to {last}, past 65535",
            value=first,
            hint="choose a lower port or fewer ports_num/ports_num_for_sparse",
        )


def _component_resources(job: TrainingJob) -> Iterator[tuple[str, ResourceRequirements]]:
    spec = job.spec
    for name, resources in (
        ("trainer", spec.trainer.resources),
        ("pserver", spec.pserver.resources),
        ("master", spec.master.resources if spec.master else None),
    ):
        if resources is not None:
            yield f"spec.{name}.resources", resources


def _resources(job: TrainingJob) -> Iterator[Finding]:
    broken = False
    for path, resources in _component_resources(job):
        for part in ("limits", "requests"):
            values = getattr(resources, part) or {}
            if all(name in values for name in GPU_NAMES):
                yield Finding(
                    code="edl.gpu_twice",
                    path=f"{path}.{part}",
                    message="GPUs are named twice (nvidia.com/gpu and the legacy "
                    "alpha.kubernetes.io/nvidia-gpu)",
                    value=sorted(GPU_NAMES),
                    hint="keep nvidia.com/gpu",
                )
            for name, value in values.items():
                problem = _quantity_problem(value)
                if problem:
                    broken = True
                    yield Finding(
                        code="edl.quantity",
                        path=f"{path}.{part}[{name!r}]" if "/" in name else f"{path}.{part}.{name}",
                        message=problem,
                        value=value,
                        hint="write a quantity such as 2, 500m or 4Gi",
                    )
    if not broken:
        yield from _trainer_count(job)


def _quantity_problem(value: object) -> str:
    try:
        amount = quantity(value)
    except BadQuantity:
        return "not a Kubernetes quantity"
    return "a quantity cannot be negative" if amount < 0 else ""


def _trainer_count(job: TrainingJob) -> Iterator[Finding]:
    resources = job.spec.trainer.resources
    limits = resources.limits if resources else None
    requests = resources.requests if resources else None
    if gpu_amount(limits) > 0:
        return
    cpu = [source["cpu"] for source in (requests, limits) if source and "cpu" in source]
    if not cpu or quantity(cpu[0]) == Fraction(0):
        yield Finding(
            code="edl.trainer_count",
            path="spec.trainer.resources",
            message="the trainers ask for no CPU, so PADDLE_INIT_TRAINER_COUNT is 0",
            hint="set resources.requests.cpu (the CPUs, rounded up, become the trainer count)",
            severity=Severity.WARNING,
        )


def _mounts(job: TrainingJob) -> Iterator[Finding]:
    names = {v.get("name") for v in job.spec.volumes or []}
    for index, mount in enumerate(job.spec.volume_mounts or []):
        name = mount.get("name")
        if name not in names:
            yield Finding(
                code="edl.volume_mount",
                path=f"spec.VolumeMounts[{index}].name",
                message="no volume in spec.volumes has this name",
                value=name,
                hint="add the volume to spec.volumes or fix the name",
            )


def _ignored(job: TrainingJob) -> Iterator[Finding]:
    spec = job.spec
    if spec.trainer.passes is not None:
        yield Finding(
            code="edl.passes_misplaced",
            path="spec.trainer.passes",
            message="the controller never read passes here (the upstream examples put it "
            f"here by mistake); the job runs spec.passes, which is {spec.passes}",
            value=spec.trainer.passes,
            hint="move it to spec.passes",
            severity=Severity.WARNING,
        )
    endpoints = [("spec.trainer.etcd-endpoint", spec.trainer.etcd_endpoint)]
    if spec.master is not None:
        endpoints.append(("spec.master.etcd-endpoint", spec.master.etcd_endpoint))
    for path, value in endpoints:
        if value:
            yield Finding(
                code="edl.unused_field",
                path=path,
                message="never read: the job uses the etcd in its master pod",
                value=value,
                hint="remove it",
                severity=Severity.ADVICE,
            )
    pserver = spec.pserver
    if pserver.max_instance and pserver.max_instance != pserver.min_instance:
        yield Finding(
            code="edl.unused_field",
            path="spec.pserver.max-instance",
            message="never read: parameter servers do not scale",
            value=pserver.max_instance,
            hint=f"remove it or set it to min-instance ({pserver.min_instance})",
            severity=Severity.ADVICE,
        )
