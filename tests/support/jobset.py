"""What the ``jobset`` target writes for a TrainJob, as tests read it."""

from __future__ import annotations

from trainjobs.errors import Finding
from trainjobs.frameworks.trainjob import Runtime, TrainJob, jobset_plan
from trainjobs.k8s.data import Manifest
from trainjobs.targets.jobset import jobset_objects


def jobset_manifests(job: TrainJob, runtime: Runtime) -> tuple[list[Manifest], list[Finding]]:
    """The objects the Trainer controller creates for ``job`` run on ``runtime`` (the
    framework's JobSet plan as the target writes it, the JobSet last), and findings."""
    plan, findings = jobset_plan(job, runtime)
    return ([] if plan is None else jobset_objects(plan)), findings
