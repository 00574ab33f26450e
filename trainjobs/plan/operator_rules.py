"""The operator's rules a framework opts into describing, and the rules a plan carries.

Each capability is small; a framework subclasses it where its operator's rule differs
from the default (re-exported by ``frameworks.capabilities``). Once a job is known
valid, its framework states every rule once as data, :class:`OperatorRules`
(``frameworks.base.operator_rules``: ``isinstance(framework, …)``, else the default
stated on the class), and the plan carries them (``JobPlan.with_rules``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from trainjobs.k8s.model import K8sModel
from trainjobs.plan.gang import GangFacts, GangMember
from trainjobs.plan.pod_set import PodSet
from trainjobs.plan.run_rules import SuccessPolicy

__all__ = [
    "Addresses",
    "Gang",
    "OperatorRules",
    "SuccessRule",
    "run_policy_scheduling",
    "training_operator_gang",
]


_NO_ADDRESSES: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True)
class OperatorRules:
    """The operator's rules for one valid job, stated once by its framework.

    The replicas' restart rules and success policy (``Framework.run_rules``, which uses
    :class:`SuccessRule`) are not among them: they list every pod, and only
    ``run-local`` and the ordering of a JobSet's Jobs read them, so those ask the
    framework of the written job themselves.

    A render keeps every job's rules, so the defaults are shared, not copied per job.

    Attributes:
        gang: how the operator gang-schedules the job (:class:`Gang`); None (default):
            the Training Operator's rule, :func:`training_operator_gang` of the plan's
            pod sets (``JobPlan.gang``).
        addresses: addresses a user needs from outside
            (``{"master": "mnist-master-0:23456"}``, :class:`Addresses`); default none.
    """

    gang: GangFacts | None = None
    addresses: Mapping[str, str] = field(default_factory=lambda: _NO_ADDRESSES)


def training_operator_gang(pod_sets: Iterable[PodSet]) -> GangFacts:
    """The Training Operator's gang rule (§5.1): every replica type joins, named by its
    lowercase type; ``minMember`` is the sum of all replicas."""
    members = tuple(GangMember(s.role, s.replicas, s.role.lower()) for s in pod_sets)
    return GangFacts(members, sum(m.pods for m in members))


def run_policy_scheduling(job: Any) -> dict[str, Any] | None:
    """``spec.runPolicy.schedulingPolicy`` as plain data, or None when unset or when the
    kind has no such field (every Kubeflow kind and the MPIJob keep it there)."""
    run_policy = getattr(getattr(job, "spec", None), "run_policy", None)
    policy = getattr(run_policy, "scheduling_policy", None)
    return policy.to_manifest() if isinstance(policy, K8sModel) else None


class Gang(ABC):
    """How the operator gang-schedules a job, for a framework whose operator does not
    follow the Training Operator. Without it a plan's gang is
    :func:`training_operator_gang` of its pod sets and its scheduling policy
    :func:`run_policy_scheduling`."""

    @abstractmethod
    def gang_facts(self, job: Any, pod_sets: Sequence[PodSet]) -> GangFacts:
        """How the operator gang-schedules the (defaulted) job; ``pod_sets`` are its
        plan's (roles and replicas, without asking the resource for its templates)."""

    def scheduling_policy(self, job: Any) -> dict[str, Any] | None:
        """The job's gang inputs as plain data, or None when unset; default
        :func:`run_policy_scheduling`."""
        return run_policy_scheduling(job)


class SuccessRule(ABC):
    """Which replicas decide a job's success, for a framework whose operator decides on
    a chief, master, launcher or worker 0. Without it every replica must succeed
    (``SuccessPolicy()``, what a plain Kubernetes Job does)."""

    @abstractmethod
    def success_policy(self, job: Any) -> SuccessPolicy:
        """Which replicas decide that the (defaulted) job succeeded."""


class Addresses(ABC):
    """Addresses a user needs from outside a job, for a framework whose jobs have any.
    Without it a job has none."""

    @abstractmethod
    def addresses(self, job: Any) -> dict[str, str]:
        """Addresses of the (defaulted) job, e.g. ``{"master": "mnist-master-0:23456"}``."""
