"""Kubeflow Trainer v2.3.0 as input: TrainJob, TrainingRuntime, ClusterTrainingRuntime.

Three outputs, each a pure function:

* ``operator``: the TrainJob (and runtimes) as written;
* ``jobset``: :func:`jobset_plan` — what the Trainer controller creates (JobSet, MPI
  Secret and hostfile, PodGroup);
* ``pods``: that JobSet, which the pods target expands as the JobSet controller would
  (``targets.jobset_pods``: headless Service, Indexed Jobs, PVCs).

:func:`resolve_runtime` finds the runtime a TrainJob names (declared ones first, then the
built-ins Trainer ships); :func:`trainjob_findings` and :func:`runtime_findings` are the
Trainer webhooks' rules.
"""

from trainjobs.frameworks.trainjob.builtins import builtin_runtimes, resolve_runtime
from trainjobs.frameworks.trainjob.framework import FRAMEWORK, TrainJobFramework
from trainjobs.frameworks.trainjob.jobset import jobset_plan, master_address
from trainjobs.frameworks.trainjob.model import (
    ClusterTrainingRuntime,
    Runtime,
    TrainingRuntime,
    TrainJob,
)
from trainjobs.frameworks.trainjob.rules import runtime_findings, trainjob_findings

__all__ = [
    "FRAMEWORK",
    "ClusterTrainingRuntime",
    "Runtime",
    "TrainJob",
    "TrainJobFramework",
    "TrainingRuntime",
    "builtin_runtimes",
    "jobset_plan",
    "master_address",
    "resolve_runtime",
    "runtime_findings",
    "trainjob_findings",
]
