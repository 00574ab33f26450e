"""The ``jobset`` target: the objects Kubeflow Trainer's controller would create.

For a TrainJob that is the JobSet (and, by ML policy, the MPI ssh Secret and hostfile
ConfigMap, the PodGroup): only the JobSet controller is needed on the cluster, not the
Trainer. The framework states the objects (``Framework.jobset``); this module adds the
plan's admission (a queue's label, or the one the TrainJob carries) to the JobSet
when that owns the pods.
"""

from __future__ import annotations

from trainjobs.plan import JobPlan
from trainjobs.targets.base import Rendered, TargetPlugin, TargetSource

__all__ = ["JobSetTarget"]


class JobSetTarget(TargetPlugin):
    name = "jobset"
    description = "the JobSet (and its Secret, ConfigMap, PodGroup) the Trainer controller makes"
    takes_over = True

    def render(self, source: TargetSource, plan: JobPlan) -> Rendered:
        objects, findings = source.jobset(plan.resource)
        owner = plan.pod_owner(self.name)
        admission = plan.admission
        return [admission.apply(m, owner) for m in objects], findings
