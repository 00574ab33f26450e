"""Jobs the ``pods`` target refuses because their operator would not run them now.

The pods target stands in for the operator: it creates at render time the Pods
the operator would create. Two run-policy settings tell the operator to create
none, and no operator is there on this target to change its mind later:

* ``runPolicy.suspend: true`` — the operator keeps the job without pods until
  someone (Kueue, or ``kubectl patch``) sets it to false. Training Operator v1.9:
  ``pkg/controller.v1/common/job.go`` (ReconcileJobs deletes the pods and
  services of a suspended job); MPI Operator v0.8: ``pkg/controller/
  mpi_job_controller.go`` (no workers, a suspended launcher Job).
* ``runPolicy.managedBy`` naming another controller (Kueue's MultiKueue): this
  cluster's operator skips the job, the named controller runs it elsewhere
  (``ManagedByExternalController`` in both operators).

Rendering the pods anyway would start a job the user asked not to start here;
rendering nothing would silently drop it. So the target refuses, with the fix.
"""

from __future__ import annotations

from typing import Any

from trainjobs.errors import Finding

__all__ = ["managed_elsewhere", "suspended"]


def _run_policy(job: Any) -> Any:
    return getattr(getattr(job, "spec", None), "run_policy", None)


def suspended(job: Any) -> list[Finding]:
    """An error when the job's ``runPolicy.suspend`` is true."""
    if not getattr(_run_policy(job), "suspend", None):
        return []
    return [
        Finding(
            code="pods.suspended",
            path="spec.runPolicy.suspend",
            message=(
                "a suspended job has no pods until it is resumed, and on the pods target "
                "no operator is there to resume it and create them"
            ),
            value=True,
            hint=(
                "remove suspend (the pods start when the stack is applied), or use the "
                "operator target and resume with: kubectl patch <kind> <name> --type=merge "
                '-p \'{"spec":{"runPolicy":{"suspend":false}}}\''
            ),
        )
    ]


def managed_elsewhere(job: Any, own: str | None) -> list[Finding]:
    """An error when ``runPolicy.managedBy`` names a controller other than ``own``.

    ``own`` is the value under which the kind's operator reconciles the job
    itself; None for an operator that never reads the field (it runs every job).
    """
    managed_by = getattr(_run_policy(job), "managed_by", None)
    if own is None or managed_by is None or managed_by == own:
        return []
    return [
        Finding(
            code="pods.managed_by",
            path="spec.runPolicy.managedBy",
            message=(
                f"the job is managed by {managed_by}, not by its operator: the operator "
                "creates no pods for it in this cluster, so the pods target cannot either"
            ),
            value=managed_by,
            hint=(
                "use the operator target (the manager dispatches the job to a worker "
                f"cluster), or remove managedBy (default {own}) to run it here"
            ),
        )
    ]
