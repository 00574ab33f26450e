"""How a job's replicas run and when the job is done: the operator's rules as data.

A framework states, for a (defaulted) job, every replica the ``pods`` target
starts (:class:`Replica`), how each is restarted, the job's retry budget, and
which replicas decide the outcome (:class:`SuccessPolicy`). The local runner
(``trainjobs run-local``) follows these rules; docs and ``trainjobs frameworks``
describe them. Pure data, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Replica", "ReplicaRestartPolicy", "RunRules", "SuccessPolicy"]

ReplicaRestartPolicy = Literal["Always", "OnFailure", "Never", "ExitCode"]
"""Kubernetes' three pod policies plus the Training Operator's ``ExitCode``
(restart on exit codes >= 128, fail the job on 1-127)."""


@dataclass(frozen=True)
class Replica:
    """One replica of a job: one pod (or the pod of a batch Job) on the ``pods`` target.

    Attributes:
        role: the replica type as written in the job (``Worker``, ``Chief``, ``Launcher``).
        index: its index within the role, from 0.
        workload: the name of the Pod (or batch Job) the ``pods`` target renders for it;
            for a pod of an Indexed batch Job (JobSet's), the pod's hostname
            ``<job>-<completion index>``.
        restart_policy: how a failed (or, with ``Always``, any) exit is retried.
        container: the container whose exit decides the replica's outcome (the
            operator's default container); ``""`` means the first container.
        remote_shell: True when the replica only serves remote commands (an MPI
            worker running ``sshd``); the local runner stands in for the ssh server
            instead of running the container's command.
        depends_on: ``(role, status)`` pairs the replica waits for before it starts
            (JobSet ``dependsOn``): ``Complete`` waits until every replica of that role
            has succeeded, ``Ready`` until every one has started. Default none.
    """

    role: str
    index: int
    workload: str
    restart_policy: ReplicaRestartPolicy = "Never"
    container: str = ""
    remote_shell: bool = False
    depends_on: tuple[tuple[str, str], ...] = ()

    @property
    def title(self) -> str:
        """``Worker 1`` for messages."""
        return f"{self.role} {self.index}"


@dataclass(frozen=True)
class SuccessPolicy:
    """Which replicas decide that a job succeeded.

    Attributes:
        roles: the deciding replica types; empty means every type.
        index: only this index of those types decides (``Worker`` 0); None means
            every replica of them.
        need: ``all`` deciding replicas must succeed, or ``any`` one of them.
        tolerated: replica types whose failure does not fail the job (TFJob
            dynamic workers). A failure of any other replica that is not retried
            fails the job.
        summary: the rule in words, for messages (``the Chief succeeds``).
    """

    roles: tuple[str, ...] = ()
    index: int | None = None
    need: Literal["all", "any"] = "all"
    tolerated: tuple[str, ...] = ()
    summary: str = "every replica succeeds"

    def decides(self, replica: Replica) -> bool:
        """Whether ``replica``'s outcome counts toward the job's success."""
        if self.roles and replica.role not in self.roles:
            return False
        return self.index is None or replica.index == self.index

    def deciding(self, replicas: tuple[Replica, ...]) -> tuple[Replica, ...]:
        """The replicas among ``replicas`` that decide."""
        return tuple(r for r in replicas if self.decides(r))

    def satisfied(self, replicas: tuple[Replica, ...], succeeded: set[str]) -> bool:
        """Whether the job has succeeded, given the workloads that succeeded so far."""
        deciding = self.deciding(replicas)
        if not deciding:
            return False
        done = [r.workload in succeeded for r in deciding]
        return all(done) if self.need == "all" else any(done)


@dataclass(frozen=True)
class RunRules:
    """A job's replicas and the rules its operator runs them by.

    Attributes:
        replicas: every replica the ``pods`` target starts, in expansion order.
        success: which replicas decide success.
        backoff_limit: restarts (summed over replicas) before the job fails;
            None means no limit.
        active_deadline_seconds: how long the job may run before it fails; None
            means no limit.
    """

    replicas: tuple[Replica, ...]
    success: SuccessPolicy
    backoff_limit: int | None = None
    active_deadline_seconds: int | None = None
