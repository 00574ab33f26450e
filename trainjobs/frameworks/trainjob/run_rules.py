"""A TrainJob's replicas and rules on the ``pods`` target, for ``trainjobs run-local``.

The pods target renders what JobSet v0.12.0 creates: per replicated job ``r`` and job
index ``j`` an Indexed batch Job ``<jobset>-<r>-<j>`` with ``completions`` pods, pod ``k``
having the hostname ``<jobset>-<r>-<j>-<k>`` (the Job controller's). Each such pod is
one replica here, named by that hostname.

The rules, as the controllers apply them:

* Restarts: a failed pod of a Job is retried whether its ``restartPolicy`` is
  ``OnFailure`` (the kubelet restarts the container) or ``Never`` (the Job controller
  makes a new pod), until the Job's ``backoffLimit`` (Kubernetes' default 6) is used up,
  which fails the Job and so the JobSet. The budget here is summed over the whole job and
  is the smallest ``backoffLimit`` of its Jobs (a cluster counts per Job). JobSet's
  ``failurePolicy.maxRestarts``, which recreates every Job, is not played.
* Success: JobSet's ``successPolicy`` (default ``All``, every replicated job): ``All``
  needs every pod of the target replicated jobs to succeed; ``Any`` one pod of them
  (JobSet: one Job completes, the same thing when such Jobs have one pod each).
* Order: a replicated job's ``dependsOn`` (Trainer's initializers before ``node``) makes
  its replicas wait for the jobs it names (:attr:`Replica.depends_on`).
* ``activeDeadlineSeconds``: the TrainJob's.
* MPI: beside a ``launcher``, the ``node`` pods run sshd for the launcher's mpirun;
  they are ``remote_shell`` replicas (run-local plays the ssh side).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from trainjobs.frameworks.trainjob.jobset import DATASET, MODEL, NODE, TRAINER, _ancestor
from trainjobs.frameworks.trainjob.model import TrainJob
from trainjobs.plan import Replica, RunRules, SuccessPolicy
from trainjobs.plan.jobset import JobSetPlan, defaulted_spec, job_name

__all__ = ["JOB_BACKOFF_LIMIT", "trainjob_run_rules"]

JOB_BACKOFF_LIMIT: Final = 6
"""A batch Job's ``backoffLimit`` when it sets none (Kubernetes' default)."""
_CONTAINERS: Final = {TRAINER: NODE, DATASET: DATASET, MODEL: MODEL}
"""The container the Trainer configures in a replicated job, by its ancestor label."""


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _pods(job_spec: Mapping[str, Any]) -> int:
    """Pods of one Indexed Job: its completions (else parallelism, else 1)."""
    return _int(job_spec.get("completions"), _int(job_spec.get("parallelism"), 1))


def trainjob_run_rules(
    job: TrainJob, jobset: JobSetPlan, remote_shell: tuple[str, ...] = ()
) -> RunRules:
    """The replicas and rules of ``job`` whose JobSet (the ``jobset`` target) is
    ``jobset``; the pods of the replicated jobs ``remote_shell`` only serve ssh (the MPI
    policy's ``node`` job beside a ``launcher``)."""
    name = jobset.name
    spec = defaulted_spec(jobset.spec)
    replicas: list[Replica] = []
    limits: list[int] = []
    for rjob in spec.get("replicatedJobs") or []:
        role = str(rjob["name"])
        job_spec = rjob["template"]["spec"]
        per_job = _pods(job_spec)
        limits.append(_int(job_spec.get("backoffLimit"), JOB_BACKOFF_LIMIT))
        depends = tuple(
            (str(d.get("name")), str(d.get("status"))) for d in rjob.get("dependsOn") or []
        )
        container = _CONTAINERS.get(_ancestor(rjob) or "", "")
        for index in range(_int(rjob.get("replicas"), 1)):
            workload = job_name(name, role, index)
            replicas += [
                Replica(
                    role=role,
                    index=index * per_job + pod,
                    workload=f"{workload}-{pod}",
                    # A Job retries a failed pod under either pod policy (see above).
                    restart_policy="OnFailure",
                    container=container,
                    remote_shell=role in remote_shell,
                    depends_on=depends,
                )
                for pod in range(per_job)
            ]
    policy = spec.get("successPolicy") or {}
    targets = tuple(str(t) for t in policy.get("targetReplicatedJobs") or [])
    which = f"of {', '.join(targets)} " if targets else ""
    if policy.get("operator") == "Any":
        success = SuccessPolicy(
            roles=targets, need="any", summary=f"a pod {which}succeeds (JobSet successPolicy Any)"
        )
    else:
        success = SuccessPolicy(
            roles=targets, summary=f"every pod {which}succeeds (JobSet successPolicy All)"
        )
    return RunRules(
        replicas=tuple(replicas),
        success=success,
        backoff_limit=min(limits, default=JOB_BACKOFF_LIMIT),
        active_deadline_seconds=job.spec.active_deadline_seconds,
    )
