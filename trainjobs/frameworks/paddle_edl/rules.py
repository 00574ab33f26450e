"""The rules a TrainingJob must follow, as findings.

The one rule upstream wrote — "max-instances should equal to min-instances when
fault_tolerant is disabled" — was never called by the TPR controller (the CRD
variant did call it); trainjobs enforces it. The others catch what would make
the API server refuse the pods, or what upstream silently ignored.
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction

from trainjobs.errors import Finding, Rule, Severity
from trainjobs.frameworks.paddle_edl.model import ResourceRequirements, TrainingJob
from trainjobs.frameworks.paddle_edl.quantities import (
    GPU_NAMES,
    BadQuantity,
    gpu_amount,
    quantity,
)
from trainjobs.k8s.names import dns1123_label_problem

__all__ = ["job_findings"]

NAME = Rule(
    "name.dns1123",
    "the job name {problem}",
    hint="rename the job; its pods carry it as the label paddle-job=<name>",
)
ENTRYPOINT = Rule(
    "edl.entrypoint",
    'every trainer runs this command (sh -c "$ENTRY"); without it the trainers do nothing',
    hint="set e.g. entrypoint: python train.py",
)
ELASTIC_NEEDS_FAULT_TOLERANCE = Rule(
    "edl.elastic_needs_fault_tolerance",
    "max-instance must equal min-instance when fault_tolerant is false: only a fault-tolerant "
    "job survives trainers being added and removed",
    hint="set spec.fault_tolerant: true to let EDL scale the trainers, or max-instance: {low}",
)
MAX_BELOW_MIN = Rule(
    "edl.max_below_min",
    "max-instance is below min-instance ({low}), so the job is not elastic",
    hint="set max-instance to {low} or more",
    severity=Severity.WARNING,
)
PORTS = Rule(
    "edl.ports",
    "the job's ports run from {first} to {last}, past 65535",
    hint="choose a lower port or fewer ports_num/ports_num_for_sparse",
)
GPU_TWICE = Rule(
    "edl.gpu_twice",
    "GPUs are named twice (nvidia.com/gpu and the legacy alpha.kubernetes.io/nvidia-gpu)",
    hint="keep nvidia.com/gpu",
)
NOT_A_QUANTITY = Rule(
    "edl.quantity", "not a Kubernetes quantity", hint="write a quantity such as 2, 500m or 4Gi"
)
NEGATIVE_QUANTITY = Rule(
    "edl.quantity", "a quantity cannot be negative", hint="write a quantity such as 2, 500m or 4Gi"
)
TRAINER_COUNT = Rule(
    "edl.trainer_count",
    "the trainers ask for no CPU, so PADDLE_INIT_TRAINER_COUNT is 0",
    hint="set resources.requests.cpu (the CPUs, rounded up, become the trainer count)",
    severity=Severity.WARNING,
)
VOLUME_MOUNT = Rule(
    "edl.volume_mount",
    "no volume in spec.volumes has this name",
    hint="add the volume to spec.volumes or fix the name",
)
PASSES_MISPLACED = Rule(
    "edl.passes_misplaced",
    "the controller never read passes here (the upstream examples put it here by mistake); "
    "the job runs spec.passes, which is {passes}",
    hint="move it to spec.passes",
    severity=Severity.WARNING,
)
ETCD_ENDPOINT_UNUSED = Rule(
    "edl.unused_field",
    "never read: the job uses the etcd in its master pod",
    hint="remove it",
    severity=Severity.ADVICE,
)
PSERVER_MAX_UNUSED = Rule(
    "edl.unused_field",
    "never read: parameter servers do not scale",
    hint="remove it or set it to min-instance ({low})",
    severity=Severity.ADVICE,
)


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
        yield NAME.at("metadata.name", job.name, problem=problem)


def _trainer(job: TrainingJob) -> Iterator[Finding]:
    trainer = job.spec.trainer
    if not trainer.entrypoint:
        yield ENTRYPOINT.at("spec.trainer.entrypoint")
    low, high = trainer.min_instance, trainer.max_instance
    if high is None or high == 0:
        return
    if high > low and not job.spec.fault_tolerant:
        yield ELASTIC_NEEDS_FAULT_TOLERANCE.at("spec.trainer.max-instance", high, low=low)
    if high < low:
        yield MAX_BELOW_MIN.at("spec.trainer.max-instance", high, low=low)


def _ports(job: TrainingJob) -> Iterator[Finding]:
    spec = job.spec
    first = spec.port or 0
    last = first + (spec.ports_num or 0) + (spec.ports_num_for_sparse or 0) - 1
    if last > 65535:
        yield PORTS.at("spec.port", first, first=first, last=last)


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
                yield GPU_TWICE.at(f"{path}.{part}", sorted(GPU_NAMES))
            for name, value in values.items():
                broken_rule = _quantity_rule(value)
                if broken_rule is not None:
                    broken = True
                    where = f"{path}.{part}[{name!r}]" if "/" in name else f"{path}.{part}.{name}"
                    yield broken_rule.at(where, value)
    if not broken:
        yield from _trainer_count(job)


def _quantity_rule(value: object) -> Rule | None:
    """The rule ``value`` breaks as a resource quantity, or None when it is one."""
    try:
        amount = quantity(value)
    except BadQuantity:
        return NOT_A_QUANTITY
    return NEGATIVE_QUANTITY if amount < 0 else None


def _trainer_count(job: TrainingJob) -> Iterator[Finding]:
    resources = job.spec.trainer.resources
    limits = resources.limits if resources else None
    requests = resources.requests if resources else None
    if gpu_amount(limits) > 0:
        return
    cpu = [source["cpu"] for source in (requests, limits) if source and "cpu" in source]
    if not cpu or quantity(cpu[0]) == Fraction(0):
        yield TRAINER_COUNT.at("spec.trainer.resources")


def _mounts(job: TrainingJob) -> Iterator[Finding]:
    names = {v.get("name") for v in job.spec.volumes or []}
    for index, mount in enumerate(job.spec.volume_mounts or []):
        name = mount.get("name")
        if name not in names:
            yield VOLUME_MOUNT.at(f"spec.VolumeMounts[{index}].name", name)


def _ignored(job: TrainingJob) -> Iterator[Finding]:
    spec = job.spec
    if spec.trainer.passes is not None:
        yield PASSES_MISPLACED.at("spec.trainer.passes", spec.trainer.passes, passes=spec.passes)
    endpoints = [("spec.trainer.etcd-endpoint", spec.trainer.etcd_endpoint)]
    if spec.master is not None:
        endpoints.append(("spec.master.etcd-endpoint", spec.master.etcd_endpoint))
    for path, value in endpoints:
        if value:
            yield ETCD_ENDPOINT_UNUSED.at(path, value)
    pserver = spec.pserver
    if pserver.max_instance and pserver.max_instance != pserver.min_instance:
        path, low = "spec.pserver.max-instance", pserver.min_instance
        yield PSERVER_MAX_UNUSED.at(path, pserver.max_instance, low=low)
