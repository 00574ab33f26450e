"""The typed plan between frameworks and everything that reads a job.

A framework turns its custom resource into a :class:`JobPlan`; capabilities edit
it, targets and checks read it. Pure data: no I/O, no pulumi.
"""

from trainjobs.plan.admission import Admission, PodOwner
from trainjobs.plan.gang import GangFacts, GangMember
from trainjobs.plan.job import JobPlan, RunPolicyFacts
from trainjobs.plan.operator_rules import OperatorRules
from trainjobs.plan.pod_set import BackendBinding, PodSet, with_backend
from trainjobs.plan.run_rules import Replica, ReplicaRestartPolicy, RunRules, SuccessPolicy

__all__ = [
    "Admission",
    "BackendBinding",
    "GangFacts",
    "GangMember",
    "JobPlan",
    "OperatorRules",
    "PodOwner",
    "PodSet",
    "Replica",
    "ReplicaRestartPolicy",
    "RunPolicyFacts",
    "RunRules",
    "SuccessPolicy",
    "with_backend",
]
