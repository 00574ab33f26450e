"""The typed plan of one job: what every consumer after parsing reads.

A framework turns its (defaulted) custom resource into a :class:`JobPlan`
(``Framework.plan``). Capabilities — backend wiring, node-pool placement, queues,
gang scheduling — edit the plan through its methods and never see the custom
resource's shape; targets, checks, ``run-local`` and the Pulumi components read it.

The plan keeps the custom resource it describes (``resource``) in step with its
pod sets: an edit goes through the framework's own :class:`ResourceEditor`, so
the ``operator`` target can emit the resource exactly as the user wrote it plus
what the capabilities added.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from trainjobs.errors import Finding
from trainjobs.k8s.data import PodTemplate
from trainjobs.k8s.kinds import KindRef
from trainjobs.plan.admission import DEFAULT_POD_OWNERS, Admission, PodOwner
from trainjobs.plan.gang import GangFacts
from trainjobs.plan.operator_rules import Addresses, Gang, SuccessRule, training_operator_gang
from trainjobs.plan.pod_set import BackendBinding, PodSet
from trainjobs.plan.run_rules import RunRules, SuccessPolicy
from trainjobs.plan.target_input import TargetInput

__all__ = ["JobPlan", "ResourceEditor", "RunPolicyFacts"]


class ResourceEditor(Protocol):
    """What a framework lends a plan so that edits reach its custom resource."""

    def plan(self, job: Any, /) -> JobPlan:
        """The plan of the resource."""
        ...

    def with_templates(self, job: Any, templates: Mapping[str, PodTemplate], /) -> Any:
        """The resource with the pod templates of the given roles replaced."""
        ...

    def bind_backend(self, job: Any, binding: BackendBinding, /) -> Any:
        """The resource bound to a rendezvous backend."""
        ...

    def run_rules(self, job: Any, /) -> RunRules | None:
        """The resource's replicas and their restart and success rules."""
        ...


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

    The operator's rules that read the whole job (``gang``, ``success``, ``addresses``,
    ``run_rules``) are worked out when asked: a plan is made right after defaulting,
    before the job is validated, and those rules may assume a valid job.

    Attributes:
        kind: the custom resource kind the job was written as.
        name: the job's name.
        namespace: the job's namespace, defaulted.
        labels: the job object's own labels.
        annotations: the job object's own annotations.
        resource: the defaulted custom resource, with every capability's edit applied
            (the ``operator`` target emits it).
        pod_sets: every role of the job with its pod template, count and path.
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
            pods (:meth:`with_admission`; a TrainJob's own queue label); kept across
            edits. Default none.
        unadmitted_warning: the warning the ``pods`` target gives when the job makes
            its pods' owners suspended there and no admission resumes them (a suspended
            TrainJob's Jobs); None (default): the job never does.
        gang_mechanism: the gang scheduler (``volcano``, ``scheduler-plugins``) the
            target itself wires the job to (``trainer``: the runtime's
            ``podGroupPolicy``); set by the gang capability, kept across edits. None
            (default): the target wires none.
        targets: the targets the job's framework renders to; default none.
        target_input: what the framework states for the target the job renders to
            (:meth:`for_target`), set last, once every capability has edited the plan
            (an edit of templates, labels or backend drops it). None (default): not
            yet stated.
        editor: the framework, which keeps ``resource`` and ``pod_sets`` in step.
    """

    kind: KindRef
    name: str
    namespace: str
    resource: Any
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
    target_input: TargetInput | None = None
    editor: ResourceEditor | None = field(default=None, compare=False, repr=False)

    @property
    def pods(self) -> int:
        """Every pod the job runs: its pod sets' replicas added up."""
        return sum(s.replicas for s in self.pod_sets)

    def pod_set(self, role: str) -> PodSet | None:
        """The pod set of ``role`` (``Worker``), or None."""
        return next((s for s in self.pod_sets if s.role == role), None)

    def with_templates(self, templates: Mapping[str, PodTemplate]) -> JobPlan:
        """The plan with the pod templates of the given roles replaced."""
        if not templates:
            return self
        return self._with_resource(self._editor.with_templates(self.resource, templates))

    @property
    def gang(self) -> GangFacts:
        """How the operator gang-schedules the job: the framework's :class:`Gang`, else
        the Training Operator's rule."""
        editor = self._editor
        if isinstance(editor, Gang):
            return editor.gang_facts(self.resource)
        return training_operator_gang(self.pod_sets)

    @property
    def success(self) -> SuccessPolicy:
        """Which replicas decide that the job succeeded: the framework's
        :class:`SuccessRule`, else every replica."""
        editor = self._editor
        if isinstance(editor, SuccessRule):
            return editor.success_policy(self.resource)
        return SuccessPolicy()

    @property
    def addresses(self) -> Mapping[str, str]:
        """Addresses a user needs from outside (``{"master": "mnist-master-0:23456"}``):
        the framework's :class:`Addresses`, else none."""
        editor = self._editor
        return editor.addresses(self.resource) if isinstance(editor, Addresses) else {}

    @property
    def run_rules(self) -> RunRules | None:
        """Every replica's restart rule and the retry budget; None when the framework
        does not describe them (``run-local`` then refuses the job). Built when asked:
        it lists every pod, and a plan is made before the pod count is checked."""
        return self._editor.run_rules(self.resource)

    def with_labels(self, labels: Mapping[str, str]) -> JobPlan:
        """The plan with labels added to the job object itself (not to its pods)."""
        merged = {**self.labels, **labels}
        return self._with_resource(self.resource.with_labels(merged))

    def pod_owner(self, target: str, role: str | None = None) -> PodOwner:
        """What owns the job's pods on ``target`` (``pods``), or those of ``role`` there:
        the object a queue admits."""
        if target == "pods" and role in self.job_roles:
            return "jobs"
        return self.pod_owners.get(target, "resource")

    def with_admission(self, labels: Mapping[str, str], suspend: bool = False) -> JobPlan:
        """The plan with ``labels`` (and, with ``suspend``, a suspended start) for the
        Jobs or JobSet that own its pods; the target puts them there."""
        return replace(self, admission=self.admission.merged(labels, suspend))

    def for_target(self, stated: TargetInput) -> JobPlan:
        """The plan with what its framework states for the target it renders to."""
        return replace(self, target_input=stated)

    def with_backend(self, binding: BackendBinding) -> JobPlan:
        """The plan bound to a rendezvous backend: its env, volumes and mounts in every
        pod template, or in the custom resource where the kind names the backend itself."""
        return self._with_resource(self._editor.bind_backend(self.resource, binding))

    @property
    def _editor(self) -> ResourceEditor:
        if self.editor is None:
            raise ValueError(f"the plan of {self.kind.kind} {self.name} cannot be edited")
        return self.editor

    def _with_resource(self, resource: Any) -> JobPlan:
        # The framework plans the edited resource again, so every view of the plan
        # (pod sets, gang facts, labels) agrees with what the targets emit. The
        # admission and the gang mechanism are no part of the resource: they are the
        # plan's own and carried over.
        planned = self._editor.plan(resource)
        return replace(planned, admission=self.admission, gang_mechanism=self.gang_mechanism)
