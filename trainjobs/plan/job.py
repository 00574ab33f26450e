"""The typed plan of one job: what every consumer after parsing reads.

A framework turns its (defaulted) custom resource into a :class:`JobPlan`
(``Framework.plan``). Capabilities — backend wiring, node-pool placement, queues,
gang scheduling — edit the plan through its methods and never see the custom
resource's shape; targets, checks, ``run-local`` and the Pulumi components read it.

The plan is data and holds no custom resource. An edit changes the plan's own fields
and nothing else: ``with_templates`` the templates of the named pod sets,
``with_labels`` the job's labels, ``with_backend`` every pod set's template, and it
keeps the binding in ``backends``. The caller keeps the defaulted job
(``render.jobs.DefaultedJob``); once the capabilities have edited the plan, the
framework writes it back into that job in one step (``Framework.written``: changed
templates, labels, and a backend the kind's resource names itself, Caffe2's
``backendSpecs``), and validation, ``Framework.target_input`` and the ``operator``
target read that written resource (written again from the defaulted job when gang
scheduling then decorates the pods). Nothing plans an edited resource again.

The operator's rules (gang, addresses) are stated once, as data, when the job
is known valid (``with_rules``, before gang scheduling reads ``gang``); reading them
earlier is an error. The replicas' restart rules list every pod and have two readers
(``run-local``, the order of a JobSet's Jobs): those ask ``Framework.run_rules`` of the
written resource, and the plan does not carry them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from trainjobs.errors import Finding
from trainjobs.k8s.data import PodTemplate
from trainjobs.k8s.kinds import KindRef
from trainjobs.plan.admission import DEFAULT_POD_OWNERS, Admission, PodOwner
from trainjobs.plan.gang import GangFacts
from trainjobs.plan.operator_rules import OperatorRules, training_operator_gang
from trainjobs.plan.pod_set import BackendBinding, PodSet, with_backend
from trainjobs.plan.target_input import TargetInput

__all__ = ["JobPlan", "RunPolicyFacts"]


@dataclass(frozen=True)
class RunPolicyFacts:
    """The run policy fields every target may need, whatever the kind calls them.

    Attributes:
        suspend: True when the job is created suspended; None when unset.
        active_deadline_seconds: how long the job may run; None: no limit.
        backoff_limit: retries before the job fails; None: the operator's default.
        ttl_seconds_after_finished: when a finished job is deleted; None: never.
    """

    suspend: bool | None = None
    active_deadline_seconds: int | None = None
    backoff_limit: int | None = None
    ttl_seconds_after_finished: int | None = None


@dataclass(frozen=True)
class JobPlan:
    """One job between parsing and output: identity, roles and the operator's rules.

    Attributes:
        kind: the custom resource kind the job was written as.
        name: the job's name.
        namespace: the job's namespace, defaulted.
        labels: the job object's own labels, with every capability's added.
        annotations: the job object's own annotations.
        pod_sets: every role of the job with its pod template (every capability's edit
            in it), count and path.
        scheduling_policy: ``spec.runPolicy.schedulingPolicy`` as plain data; None unset.
        run_policy: suspend, deadlines and retries, whatever the kind calls them.
        status_conditions: the condition types the operator sets on the custom resource
            when the job runs and when it has succeeded (``{"running": "Running", …}``);
            what ``trainjobs: {wait: …}`` waits for. Default none.
        listens_on_all_addresses: True when the runtime's servers bind their port on
            every address, so replicas on one machine need ports of their own
            (``run-local``); default False.
        pod_owners: per target, what owns the job's pods there (:data:`PodOwner`): the
            object a queue admits. Targets not named: the resource. Default
            :data:`DEFAULT_POD_OWNERS`.
        job_roles: the roles whose pods, on the ``pods`` target, a batch Job the
            framework makes owns where the rest are bare Pods (an MPIJob's Launcher);
            default none.
        admission: what the Jobs or JobSet the framework makes carry when those own the
            pods (:meth:`with_admission`; a TrainJob's own queue label). Default none.
        unadmitted_warning: the warning the ``pods`` target gives when the job makes
            its pods' owners suspended there and no admission resumes them (a suspended
            TrainJob's Jobs); None (default): the job never does.
        gang_mechanism: the gang scheduler (``volcano``, ``scheduler-plugins``) the
            target itself wires the job to (``trainer``: the runtime's
            ``podGroupPolicy``); set by the gang capability. None (default): the target
            wires none.
        targets: the targets the job's framework renders to; default none.
        carried_backends: the backend types the custom resource names itself (Caffe2's
            ``backendSpecs``: ``redis``, ``nfs``), each with the env names its
            controller then sets in the pods, which a binding of that type does not add
            to the templates. Default none: every binding goes to the templates alone.
        backends: every backend bound to the job (:meth:`with_backend`), in order; the
            framework writes those of a type in ``carried_backends`` into the custom
            resource. Default none.
        rules: the operator's rules, stated once the job is known valid
            (:meth:`with_rules`); None (default): not yet stated, and reading
            :attr:`gang` or :attr:`addresses` is an error.
        target_input: what the framework states for the target the job renders to
            (:meth:`for_target`), set last, once every capability has edited the plan
            (an edit of templates, labels or backend drops it). None (default): not
            yet stated.
    """

    kind: KindRef
    name: str
    namespace: str
    pod_sets: tuple[PodSet, ...]
    scheduling_policy: Mapping[str, Any] | None
    run_policy: RunPolicyFacts
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    status_conditions: Mapping[str, str] = field(default_factory=dict)
    listens_on_all_addresses: bool = False
    pod_owners: Mapping[str, PodOwner] = field(default_factory=lambda: DEFAULT_POD_OWNERS)
    job_roles: frozenset[str] = frozenset()
    admission: Admission = field(default_factory=Admission)
    unadmitted_warning: Finding | None = None
    gang_mechanism: str | None = None
    targets: tuple[str, ...] = ()
    carried_backends: Mapping[str, frozenset[str]] = field(default_factory=dict)
    backends: tuple[BackendBinding, ...] = ()
    rules: OperatorRules | None = None
    target_input: TargetInput | None = None

    @property
    def pods(self) -> int:
        """Every pod the job runs: its pod sets' replicas added up."""
        return sum(s.replicas for s in self.pod_sets)

    def pod_set(self, role: str) -> PodSet | None:
        """The pod set of ``role`` (``Worker``), or None."""
        return next((s for s in self.pod_sets if s.role == role), None)

    def with_templates(self, templates: Mapping[str, PodTemplate]) -> JobPlan:
        """The plan with the pod templates of the given roles replaced; a role the job
        does not have is ignored."""
        if not templates:
            return self
        pod_sets = tuple(
            replace(s, template=templates[s.role]) if s.role in templates else s
            for s in self.pod_sets
        )
        return self._with(pod_sets=pod_sets, target_input=None)

    def with_labels(self, labels: Mapping[str, str]) -> JobPlan:
        """The plan with labels added to the job object itself (not to its pods)."""
        return self._with(labels={**self.labels, **labels}, target_input=None)

    def with_backend(self, binding: BackendBinding) -> JobPlan:
        """The plan bound to a rendezvous backend: its env, volumes and mounts in every
        pod template, less the env a custom resource naming the backend itself makes
        its controller set (``carried_backends``); the binding is kept in ``backends``."""
        carried = self.carried_backends.get(binding.type, frozenset())
        env = tuple(e for e in binding.env if e.get("name") not in carried)
        applied = replace(binding, env=env) if carried else binding
        templates = {s.role: with_backend(s.template, applied) for s in self.pod_sets}
        bound = self.with_templates(templates)
        return bound._with(backends=(*self.backends, binding), target_input=None)

    def with_admission(self, labels: Mapping[str, str], suspend: bool = False) -> JobPlan:
        """The plan with ``labels`` (and, with ``suspend``, a suspended start) for the
        Jobs or JobSet that own its pods; the target puts them there."""
        return self._with(admission=self.admission.merged(labels, suspend))

    def with_rules(self, rules: OperatorRules) -> JobPlan:
        """The plan with the operator's rules its framework states for the valid job."""
        return self._with(rules=rules)

    def for_target(self, stated: TargetInput) -> JobPlan:
        """The plan with what its framework states for the target it renders to."""
        return self._with(target_input=stated)

    def pod_owner(self, target: str, role: str | None = None) -> PodOwner:
        """What owns the job's pods on ``target`` (``pods``), or those of ``role`` there:
        the object a queue admits."""
        if target == "pods" and role in self.job_roles:
            return "jobs"
        return self.pod_owners.get(target, "resource")

    @property
    def gang(self) -> GangFacts:
        """How the operator gang-schedules the job (stated by :meth:`with_rules`; the
        Training Operator's rule over the pod sets where the framework states none)."""
        stated = self._rules.gang
        return training_operator_gang(self.pod_sets) if stated is None else stated

    @property
    def addresses(self) -> Mapping[str, str]:
        """Addresses a user needs from outside (``{"master": "mnist-master-0:23456"}``;
        stated by :meth:`with_rules`)."""
        return self._rules.addresses

    def _with(self, **changes: Any) -> JobPlan:
        # A plan is copied at every edit, several times per job: dataclasses.replace
        # would run __init__ over every field again (the render of many jobs feels it).
        # The fields need no checking, so the copy takes them as they are.
        copied = object.__new__(type(self))
        copied.__dict__.update(self.__dict__, **changes)
        return copied

    @property
    def _rules(self) -> OperatorRules:
        # The rules may assume a valid job: a default read before they are stated
        # would be wrong.
        if self.rules is None:
            raise ValueError(
                f"the operator's rules of {self.kind.kind} {self.name} are not stated yet: "
                "read them after validation (JobPlan.with_rules)"
            )
        return self.rules
