"""The ``trainjob`` framework: a TrainJob as input, on the operator, jobset and pods targets.

Not in ``frameworks.registry`` yet: the typed JobPlan and its ``jobset`` target wire it in.
Runtimes come from :attr:`TrainJobFramework.declared` (the TrainingRuntimes and
ClusterTrainingRuntimes of the same render) and then from Trainer v2.3.0's built-ins.

Cross-cutting features (node-pool placement, backends) change a job through
:meth:`TrainJobFramework.with_templates`, which turns a changed pod template into what a
TrainJob can say about it: ``trainer.resourcesPerNode`` and ``trainer.env`` for the
trainer's ``node`` container, and one ``runtimePatches`` entry (manager
:data:`PATCH_MANAGER`) for the pod fields a runtime patch may set.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from functools import cache
from types import MappingProxyType
from typing import Any, ClassVar, Final

from trainjobs.errors import Finding, Severity
from trainjobs.frameworks.base import Framework
from trainjobs.frameworks.capabilities import (
    Addresses,
    CarriesDefinitions,
    Definitions,
    Gang,
    JobSetConversion,
)
from trainjobs.frameworks.trainjob.builtins import builtin_runtimes, resolve_runtime
from trainjobs.frameworks.trainjob.jobset import (
    DATASET,
    LAUNCHER,
    MODEL,
    NODE,
    TRAINER_PORT,
    _ancestor,
    jobset_plan,
    master_address,
    too_many_nodes,
)
from trainjobs.frameworks.trainjob.model import (
    CLUSTER_RUNTIME_KIND,
    DEFAULT_MANAGED_BY,
    RUNTIME_KIND_REF,
    TRAINJOB_KIND,
    ClusterTrainingRuntime,
    Runtime,
    TrainingRuntime,
    TrainJob,
)
from trainjobs.frameworks.trainjob.rules import runtime_findings, trainjob_findings
from trainjobs.frameworks.trainjob.run_rules import trainjob_run_rules
from trainjobs.k8s.crds import load_crd
from trainjobs.k8s.data import Manifest, PodTemplate, deep_copy
from trainjobs.k8s.kinds import KindRef
from trainjobs.plan import (
    Admission,
    GangFacts,
    GangMember,
    JobPlan,
    PodOwner,
    PodSet,
    RunPolicyFacts,
    RunRules,
)
from trainjobs.plan.expansion import Expansion
from trainjobs.plan.jobset import JobSetPlan, claim_volumes

__all__ = ["FRAMEWORK", "PATCH_MANAGER", "TrainJobFramework"]

PATCH_MANAGER: Final = "trainjobs.dev/trainjobs"
"""The ``runtimePatches[].manager`` of the patch trainjobs writes for placement/backends."""
_PATCHABLE_POD: Final = (
    "serviceAccountName",
    "volumes",
    "imagePullSecrets",
    "securityContext",
    "nodeSelector",
    "affinity",
    "tolerations",
    "schedulingGates",
    "terminationGracePeriodSeconds",
)
"""The pod spec fields ``runtimePatches`` may set (Trainer v2.3.0 ``PodSpecPatch``)."""
_RUNTIME_TYPES: Final = (TrainingRuntime, ClusterTrainingRuntime)
_POD_OWNERS: Final[Mapping[str, PodOwner]] = MappingProxyType(
    {"operator": "resource", "jobset": "jobset", "pods": "jobs"}
)
"""What owns a TrainJob's pods: on the operator target the TrainJob (the Trainer makes
the rest), on the jobset target the JobSet, on the pods target the JobSet's batch Jobs."""


class TrainerRuntimes(Definitions):
    """The runtimes a TrainJob names (``runtimeRef``), declared beside it or shipped."""

    def model(self, kind: str) -> type[TrainingRuntime | ClusterTrainingRuntime]:
        return TrainingRuntime if kind == RUNTIME_KIND_REF.kind else ClusterTrainingRuntime

    def findings(self, definition: Any) -> list[Finding]:
        return runtime_findings(definition) if isinstance(definition, _RUNTIME_TYPES) else []

    def uses(self, job: Any, definition: Any) -> bool:
        if not isinstance(job, TrainJob) or not isinstance(definition, _RUNTIME_TYPES):
            return False
        found, _ = resolve_runtime(job, (definition,))
        return found is definition

    def shipped(self) -> list[Manifest]:
        """The eight ClusterTrainingRuntimes Trainer v2.3.0's install ships."""
        return [runtime.to_manifest() for runtime in builtin_runtimes()]


class TrainJobFramework(Framework[TrainJob], CarriesDefinitions, JobSetConversion, Gang, Addresses):
    """Kubeflow Trainer v2.3.0's TrainJob."""

    name = "trainjob"
    title = "Kubeflow Trainer v2 (TrainJob)"
    kind = TRAINJOB_KIND
    model = TrainJob
    targets: ClassVar[tuple[str, ...]] = ("operator", "jobset", "pods")
    operator = "Kubeflow Trainer v2.3.0"
    crd_file = "trainer-v2.3.0/trainer.kubeflow.org_trainjobs.yaml"
    status_subresource = True
    status_conditions: ClassVar[dict[str, str]] = {"succeeded": "Complete"}
    success_rule = "when the JobSet's success policy is met (default: every Job completes)"
    reconciled_managed_by = DEFAULT_MANAGED_BY
    definition_kinds: ClassVar[tuple[KindRef, ...]] = (CLUSTER_RUNTIME_KIND, RUNTIME_KIND_REF)
    definitions: ClassVar[Definitions | None] = TrainerRuntimes()
    # Trainer v2.3.0 pkg/webhooks/trainjob_webhook.go runs each ML-policy plugin's
    # Validate (pkg/runtime/framework/plugins/{torch,mpi,jobset}) against the runtime;
    # trainingruntime_webhook.go checks a runtime's replicated jobs.
    webhook_rules = frozenset(
        {
            "trainjob.reserved_env",
            "trainjob.env_injection_target",
            "trainjob.torchtune_model",
            "trainjob.torchtune_nodes",
            "trainjob.torchtune_lora_nodes",
            "trainjob.torchtune_qlora",
            "trainjob.torchtune_immutable",
            "trainjob.mpi_nodes",
            "trainjob.initializer_runtime",
            "trainjob.patch_manager",
            "trainjob.patch_job",
            "trainjob.patch_container",
            "trainjob.patch_env",
            "trainjob.runtime_kind",
            "trainjob.runtime_replicas",
            "trainjob.runtime_container",
            # "specified clusterTrainingRuntime must be created before the TrainJob".
            "trainjob.runtime_not_found",
        }
    )
    # The v2.3.0 TrainJob CRD's x-kubernetes-validations (metadata.name an RFC 1035
    # label of at most 63 characters, managedBy one of two values) and its schema, which
    # no longer declares the v2.0/v2.1 override fields.
    schema_rules = frozenset({"trainjob.name", "spec.trainjob_removed_field"})
    schema_enums = ("managedBy",)
    # The TrainJob is stored; the controller then fails it (an MPI implementation it
    # lacks) or cannot create its JobSet, which JobSet v0.12.0's webhook refuses (a name
    # too long for its pods, dependsOn / successPolicy naming no earlier job).
    controller_rules = frozenset(
        {
            "trainjob.mpi_implementation",
            "trainjob.pod_name_length",
            "trainjob.runtime_depends_on",
            "trainjob.runtime_depends_first",
            "trainjob.runtime_success_target",
        }
    )

    def __init__(self, declared: Sequence[Runtime] = (), carried: Sequence[Runtime] = ()) -> None:
        self.declared: tuple[Runtime, ...] = tuple(declared)
        """Runtimes of the same render, looked up before the built-ins; default none."""
        self.carried: tuple[Runtime, ...] = tuple(carried)
        """Declared runtimes the operator target emits with this job; default none."""

    def with_runtimes(
        self, declared: Iterable[Runtime], carried: Iterable[Runtime] = ()
    ) -> TrainJobFramework:
        """The framework resolving ``runtimeRef`` among ``declared`` first, emitting
        ``carried`` with the TrainJob on the operator target."""
        return TrainJobFramework(tuple(declared), tuple(carried))

    def with_definitions(
        self, definitions: Sequence[Any], carried: Sequence[Any] = ()
    ) -> TrainJobFramework:
        return self.with_runtimes(
            (d for d in definitions if isinstance(d, _RUNTIME_TYPES)),
            (d for d in carried if isinstance(d, _RUNTIME_TYPES)),
        )

    def definition_manifests(self, job: TrainJob) -> list[Manifest]:
        out = []
        for runtime in self.carried:
            manifest = runtime.to_manifest()
            if isinstance(runtime, TrainingRuntime):
                # Namespaced, like every object of a render: made explicit.
                manifest["metadata"] = {**manifest["metadata"], "namespace": runtime.namespace}
            out.append(manifest)
        return out

    def runtime(self, job: TrainJob) -> tuple[Runtime | None, list[Finding]]:
        """The runtime ``job`` names, or None and the finding saying why."""
        return resolve_runtime(job, self.declared)

    def default(self, job: TrainJob) -> TrainJob:
        # The operator target re-emits the TrainJob as written, its namespace made
        # explicit as in every render; the controller's defaults are applied where the
        # expansion reads them.
        metadata = job.metadata.model_copy(update={"namespace": job.metadata.ns})
        return job.model_copy(update={"metadata": metadata})

    def validate(self, job: TrainJob) -> list[Finding]:
        runtime, findings = self.runtime(job)
        if runtime is None:
            return findings
        too_many = too_many_nodes(job, runtime.spec.ml_policy)
        unknown = list(_unknown_fields(job.to_manifest()["spec"], _crd_spec(), "spec"))
        return [*unknown, *(too_many or trainjob_findings(job, runtime))]

    def jobset(self, job: TrainJob) -> tuple[JobSetPlan | None, list[Finding]]:
        """The ``jobset`` target: what the Trainer controller creates, and its findings."""
        runtime, findings = self.runtime(job)
        if runtime is None:
            return None, findings
        return jobset_plan(job, runtime)

    def _jobset(self, job: TrainJob) -> JobSetPlan | None:
        return self.jobset(job)[0]

    def pod_templates(self, job: TrainJob) -> Iterable[PodSet]:
        jobset = self._jobset(job)
        if jobset is None:
            return
        for rjob in jobset.spec.get("replicatedJobs") or []:
            job_spec = rjob["template"]["spec"]
            template = deep_copy(job_spec.get("template") or {})
            # The pods get the volumes of the JobSet's volumeClaimPolicies too.
            pod_spec = template.setdefault("spec", {})
            claims = claim_volumes(jobset.name, jobset.spec, pod_spec)
            if claims:
                pod_spec["volumes"] = [*(pod_spec.get("volumes") or []), *claims]
            yield PodSet(
                role=rjob["name"],
                # The template is the runtime's, not in the TrainJob: findings about it
                # point at the field that names the runtime (a field path, for checks).
                path="spec.runtimeRef",
                template=template,
                replicas=rjob.get("replicas", 1) * job_spec.get("parallelism", 1),
            )

    def with_templates(self, job: TrainJob, templates: Mapping[str, PodTemplate]) -> TrainJob:
        before = {ref.role: ref.template for ref in self.pod_templates(job)}
        jobset = self._jobset(job)
        name, jobset_spec = (jobset.name, jobset.spec) if jobset is not None else (job.name, {})
        ancestors = {r["name"]: _ancestor(r) for r in jobset_spec.get("replicatedJobs") or []}
        document = job.to_manifest()
        spec = document["spec"]
        for role, template in templates.items():
            old = before.get(role)
            if old is not None and template != old and ancestors.get(role) == "trainer":
                _trainer_changes(spec, old, template)
        others = [p for p in spec.get("runtimePatches") or [] if p["manager"] != PATCH_MANAGER]
        # trainjobs' one patch holds every change of every capability (a node pool, then
        # a queue …): it is written afresh against the runtime without it each time.
        base_doc = {**document, "spec": {**spec, "runtimePatches": others or None}}
        base_job = TrainJob.model_validate(base_doc)
        base = {ref.role: ref.template for ref in self.pod_templates(base_job)}
        wanted = {**before, **templates}
        patches: list[dict[str, Any]] = []
        for role, old in base.items():
            new = wanted.get(role, old)
            if new == old:
                continue
            claims = claim_volumes(name, jobset_spec, (new.get("spec") or {}))
            patch = _pod_patch(role, _without(old, claims), _without(new, claims))
            if patch is not None:
                patches.append(patch)
        own = {
            "manager": PATCH_MANAGER,
            "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": patches}}},
        }
        spec["runtimePatches"] = [*others, own] if patches else others or None
        if spec["runtimePatches"] is None:
            del spec["runtimePatches"]
        return TrainJob.model_validate(document)

    def expansion(self, job: TrainJob) -> Expansion:
        # The Trainer makes a JobSet, which the pods target expands as the JobSet
        # controller would (targets.jobset_pods): no Pod per replica here.
        plan, _ = self.jobset(job)
        return Expansion(jobset=plan)

    def plan(self, job: TrainJob) -> JobPlan:
        # A suspended TrainJob's Jobs are created suspended (JobSet copies suspend):
        # on the pods target only an admission (a queue) resumes them.
        # Kueue's TrainJob integration admits the TrainJob by its own labels, which the
        # Trainer does not copy: on the targets that make the JobSet or its Jobs those
        # carry them instead.
        return replace(
            super().plan(job),
            pod_owners=_POD_OWNERS,
            admission=Admission.carried(job.metadata.labels or {}),
            unadmitted_warning=_suspended_jobs() if job.suspended else None,
        )

    def pods_findings(self, job: TrainJob) -> list[Finding]:
        # What the pods target cannot do as JobSet would is the target's to say
        # (targets.jobset_pods), at the JobSet plan's source_path.
        return self.jobset(job)[1]

    def run_policy(self, job: TrainJob) -> RunPolicyFacts:
        # A TrainJob keeps suspend and the deadline in its spec; retries are the
        # runtime's Jobs' backoffLimit, not the TrainJob's.
        return RunPolicyFacts(
            suspend=job.spec.suspend,
            active_deadline_seconds=job.spec.active_deadline_seconds,
        )

    def run_rules(self, job: TrainJob) -> RunRules | None:
        # One replica per pod of JobSet's Indexed Jobs (run_rules.py); None without a runtime.
        jobset = self._jobset(job)
        if jobset is None:
            return None
        runtime, _ = self.runtime(job)
        ml = runtime.spec.ml_policy if runtime is not None else None
        roles = [r.get("name") for r in jobset.spec.get("replicatedJobs") or []]
        # MPI: the node pods serve ssh to the launcher's mpirun (run-local plays ssh).
        mpi = ml is not None and ml.kind == "mpi" and LAUNCHER in roles
        return trainjob_run_rules(job, jobset, (NODE,) if mpi else ())

    def scheduling_policy(self, job: TrainJob) -> dict[str, Any] | None:
        return None

    def gang_facts(self, job: TrainJob, pod_sets: Sequence[PodSet]) -> GangFacts:
        members = tuple(GangMember(s.role, s.replicas) for s in pod_sets)
        return GangFacts(
            members,
            sum(m.pods for m in members),
            unsupported="a TrainJob is gang-scheduled by its runtime's podGroupPolicy "
            "(coscheduling or volcano): set it in the runtime",
        )

    def addresses(self, job: TrainJob) -> dict[str, str]:
        runtime, _ = self.runtime(job)
        kind = runtime.spec.ml_policy.kind if runtime and runtime.spec.ml_policy else ""
        if kind in ("torch", "jax", "xgboost"):
            return {"master": f"{master_address(job)}:{TRAINER_PORT}"}
        return {}


@cache
def _crd_spec() -> Mapping[str, Any]:
    crd = load_crd(TrainJobFramework.crd_file)
    (version,) = crd["spec"]["versions"]
    spec: Mapping[str, Any] = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    return spec


def _unknown_fields(value: Any, schema: Mapping[str, Any], path: str) -> Iterator[Finding]:
    """Fields the CRD's structural schema does not have, or of another type, at the
    user's path.

    The model keeps Kubernetes types (resources, env, volumes …) as plain data, and
    those values end up in the runtime's pod templates, whose check would name the
    runtime: the API server would prune such a field from the TrainJob, so the user
    meant something else."""
    wanted = _wrong_type(value, schema)
    if wanted:
        yield Finding(
            code="trainjob.field_type",
            path=path,
            message=f"must be {wanted}, as the TrainJob CRD says",
            value=value,
            hint=f"write {wanted} here",
        )
        return
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for index, item in enumerate(value):
            yield from _unknown_fields(item, schema["items"], f"{path}[{index}]")
        return
    if not isinstance(value, Mapping):
        return
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        for key, item in value.items():
            if key in properties:
                yield from _unknown_fields(item, properties[key], f"{path}.{key}")
            elif not schema.get("x-kubernetes-preserve-unknown-fields"):
                close = difflib.get_close_matches(str(key), list(properties), n=1, cutoff=0.75)
                yield Finding(
                    code="trainjob.unknown_field",
                    path=f"{path}.{key}",
                    message="unknown field: the TrainJob CRD has no such field, and the API "
                    "server would drop it",
                    value=item,
                    hint=f"did you mean {close[0]!r}?" if close else "remove it",
                )
    elif isinstance(schema.get("additionalProperties"), Mapping):
        for key, item in value.items():
            yield from _unknown_fields(item, schema["additionalProperties"], f"{path}.{key}")


_TYPES: Final = {
    "string": ("a string", (str,)),
    "integer": ("a whole number", (int,)),
    "number": ("a number", (int, float)),
    "boolean": ("true or false", (bool,)),
    "object": ("a mapping", (Mapping,)),
    "array": ("a list", (list,)),
}


def _wrong_type(value: Any, schema: Mapping[str, Any]) -> str:
    """What ``value`` should be by ``schema``'s type, or ``""`` when it is that."""
    if schema.get("x-kubernetes-int-or-string"):
        ok = isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))
        return "" if ok else "a number or a string"
    found = _TYPES.get(str(schema.get("type")))
    if found is None:
        return ""
    name, types = found
    if isinstance(value, bool) and bool not in types:
        return name
    return "" if isinstance(value, types) else name


def _suspended_jobs() -> Finding:
    return Finding(
        code="trainjob.pods_suspended",
        path="spec.suspend",
        message="the TrainJob is suspended, so its Jobs are created suspended (as JobSet "
        "creates them), and on the pods target neither the Trainer nor a queue resumes them",
        value=True,
        hint="remove suspend, give the job a queue (trainjobs: {queue: …}), or resume each "
        'Job with: kubectl patch job <name> --type=merge -p \'{"spec":{"suspend":false}}\'',
        severity=Severity.WARNING,
    )


def _container(template: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    for container in (template.get("spec") or {}).get("containers") or []:
        if container.get("name") == name:
            found: Mapping[str, Any] = container
            return found
    return {}


def _trainer_changes(spec: dict[str, Any], old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
    """Resources and env of the trainer's ``node`` container: what ``spec.trainer`` sets."""
    old_node, new_node = _container(old, NODE), _container(new, NODE)
    trainer = spec.setdefault("trainer", {})
    if new_node.get("resources") != old_node.get("resources") and new_node.get("resources"):
        trainer["resourcesPerNode"] = deep_copy(new_node["resources"])
    old_env = {e.get("name") for e in old_node.get("env") or []}
    added = [deep_copy(e) for e in new_node.get("env") or [] if e.get("name") not in old_env]
    if added:
        trainer["env"] = [*(trainer.get("env") or []), *added]


def _without(template: Mapping[str, Any], volumes: list[dict[str, Any]]) -> Mapping[str, Any]:
    """``template`` without the claim ``volumes`` JobSet adds itself (a patch must not)."""
    spec = template.get("spec") or {}
    if not volumes or not spec.get("volumes"):
        return template
    kept = [v for v in spec["volumes"] if v not in volumes]
    return {**template, "spec": {**spec, "volumes": kept or None}}


def _pod_patch(role: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any] | None:
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    pod: dict[str, Any] = {}
    for key in _PATCHABLE_POD:
        if new_spec.get(key) != old_spec.get(key) and new_spec.get(key) is not None:
            pod[key] = deep_copy({"v": new_spec[key]})["v"]
    containers = []
    for container in new_spec.get("containers") or []:
        name = container.get("name")
        before = _container(old, name)
        entry: dict[str, Any] = {"name": name}
        mounts = container.get("volumeMounts")
        if mounts != before.get("volumeMounts") and mounts:
            entry["volumeMounts"] = [deep_copy(m) for m in mounts]
        security = container.get("securityContext")
        if security and security != before.get("securityContext"):
            entry["securityContext"] = deep_copy(container["securityContext"])
        # env of node and the initializers is the TrainJob's to set, never a patch's
        env = container.get("env")
        if env and name not in (NODE, DATASET, MODEL) and env != before.get("env"):
            entry["env"] = [deep_copy(e) for e in container["env"]]
        if len(entry) > 1:
            containers.append(entry)
    if containers:
        pod["containers"] = containers
    template: dict[str, Any] = {}
    meta = {}
    for key in ("labels", "annotations"):
        new_meta = (new.get("metadata") or {}).get(key) or {}
        old_meta = (old.get("metadata") or {}).get(key) or {}
        changed = {k: v for k, v in new_meta.items() if old_meta.get(k) != v}
        if changed:
            meta[key] = changed
    if meta:
        template["metadata"] = meta
    if pod:
        template["spec"] = pod
    if not template:
        return None
    return {"name": role, "template": {"spec": {"template": template}}}


FRAMEWORK = TrainJobFramework()
"""The framework with no declared runtimes (built-ins only)."""
