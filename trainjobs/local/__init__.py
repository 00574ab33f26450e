"""The local runner: a job's ``pods`` expansion as processes on this machine.

``trainjobs run-local PATH`` starts one process per replica with the env,
addresses and restart and success rules the job would get on a cluster, so a
wrong TF_CONFIG, rank or hostfile shows up in seconds. Modules: ``plan`` (pure:
pods → process specs), ``indexed`` (an Indexed Job's pods, as the Job controller
makes them), ``hosts`` (names → loopback addresses), ``environment``
(the kubelet's env rules), ``supervisor`` (processes and rules), ``ui`` (what is
printed), ``run`` (all of it together).
"""

from trainjobs.local.plan import RUNNER_ENV, LocalPlan, ProcessSpec, build_plan
from trainjobs.local.run import run_local
from trainjobs.local.supervisor import Outcome

__all__ = ["RUNNER_ENV", "LocalPlan", "Outcome", "ProcessSpec", "build_plan", "run_local"]
