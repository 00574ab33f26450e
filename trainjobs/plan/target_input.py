"""What a job's framework states for the one target the job renders to, as data.

A target takes only the job's plan: what it needs from the framework beyond the pod
sets, run policy and admission (the custom resource itself, what the operator would
create, the job's Trainer or JobSet form) the framework states once, for that target,
from the job with every capability's edit applied, and the plan carries it
(``JobPlan.target_input``). The target then owns every object's shape.
"""

from __future__ import annotations

from dataclasses import dataclass

from trainjobs.errors import Finding
from trainjobs.k8s.data import Manifest
from trainjobs.plan.expansion import Expansion
from trainjobs.plan.jobset import JobSetPlan
from trainjobs.plan.trainer import TrainerPlan

__all__ = ["TargetInput"]


@dataclass(frozen=True)
class TargetInput:
    """What the framework states for one target of one job.

    Attributes:
        target: the target it is for (one of ``targets.names.TARGETS``).
        findings: what the framework says that target cannot do for the job (the
            ``pods`` target's refusals, why a job has no Trainer or JobSet form); errors
            among them refuse the job there. Default none.
        resource: ``operator``: the custom resource its operator consumes, defaults
            explicit and every capability's edit in it; None otherwise.
        definitions: ``operator``: the declared definitions the job carries (a Trainer
            runtime), emitted before it; default none.
        expansion: ``pods``: what the operator would create; None when the job is
            refused there, or for another target.
        trainer: ``trainer``: the job as a Kubeflow Trainer v2 runtime and node count;
            None when it has no such form, or for another target.
        jobset: ``jobset``: what the Trainer controller makes of the job; None when it
            cannot, or for another target.
    """

    target: str
    findings: tuple[Finding, ...] = ()
    resource: Manifest | None = None
    definitions: tuple[Manifest, ...] = ()
    expansion: Expansion | None = None
    trainer: TrainerPlan | None = None
    jobset: JobSetPlan | None = None
