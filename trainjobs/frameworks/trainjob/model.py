"""Kubeflow Trainer v2.3.0 input: TrainJob, TrainingRuntime and ClusterTrainingRuntime.

``trainer.kubeflow.org/v1alpha1`` exactly as Trainer v2.3.0's CRDs accept the three kinds
(kubeflow-operators.md §7.1, §7.2; ``pkg/apis/trainer/v1alpha1`` at v2.3.0). Every field is
optional where the CRD makes it so; unset stays unset (the operator target re-emits the
document as written). The defaults the API server applies from the CRD schema are in the
``*_or_default`` helpers and in :func:`defaulted_ml_policy`, which the expansion reads.

Fields older v2 releases had and v2.2 removed are refused with the field that replaces
them (:data:`REMOVED_FIELDS`), never ignored: a ``podTemplateOverrides`` that silently did
nothing would put a job on the wrong nodes.

Kubernetes core types inside (env, resources, volumes, pod templates) are plain data here
and checked against the Kubernetes schema by the ``check`` layer, as in every framework.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Final, Literal

from pydantic import BeforeValidator, Field, model_validator
from pydantic_core import PydanticCustomError

from trainjobs.k8s.kinds import KindRef
from trainjobs.k8s.model import JobResource, K8sModel
from trainjobs.k8s.structural import kubernetes_type
from trainjobs.plan.trainer import API_GROUP, API_VERSION, RUNTIME_KIND, TRAINJOB_KIND

__all__ = [
    "API_GROUP",
    "API_VERSION",
    "CLUSTER_RUNTIME_KIND",
    "DEFAULT_MANAGED_BY",
    "IMMUTABLE_FIELDS",
    "MULTIKUEUE",
    "REMOVED_FIELDS",
    "RUNTIME_KINDS",
    "RUNTIME_KIND_REF",
    "TRAINJOB_KIND",
    "ClusterTrainingRuntime",
    "JobSetSpec",
    "MLPolicy",
    "MPIPolicy",
    "PodGroupPolicy",
    "ReplicatedJob",
    "Runtime",
    "RuntimePatch",
    "RuntimeRef",
    "TrainJob",
    "TrainJobSpec",
    "Trainer",
    "TrainingRuntime",
    "TrainingRuntimeSpec",
]

CLUSTER_RUNTIME_KIND = RUNTIME_KIND
RUNTIME_KIND_REF = KindRef(API_VERSION, "TrainingRuntime", "trainingruntimes")
RUNTIME_KINDS: Final = (CLUSTER_RUNTIME_KIND.kind, RUNTIME_KIND_REF.kind)
DEFAULT_MANAGED_BY: Final = "trainer.kubeflow.org/trainjob-controller"
"""``spec.managedBy`` when unset: the Trainer controller reconciles the TrainJob."""
MULTIKUEUE: Final = "kueue.x-k8s.io/multikueue"
"""The other ``spec.managedBy`` value the CRD allows: Kueue MultiKueue dispatches the job
to a worker cluster, and this cluster's Trainer controller leaves it alone."""

EnvVar = Annotated[dict[str, Any], kubernetes_type("io.k8s.api.core.v1.EnvVar")]
Resources = Annotated[dict[str, Any], kubernetes_type("io.k8s.api.core.v1.ResourceRequirements")]
Volume = Annotated[dict[str, Any], kubernetes_type("io.k8s.api.core.v1.Volume")]
VolumeMount = Annotated[dict[str, Any], kubernetes_type("io.k8s.api.core.v1.VolumeMount")]
SecurityContext = Annotated[dict[str, Any], kubernetes_type("io.k8s.api.core.v1.SecurityContext")]
PodSecurityContext = Annotated[
    dict[str, Any], kubernetes_type("io.k8s.api.core.v1.PodSecurityContext")
]
Affinity = Annotated[dict[str, Any], kubernetes_type("io.k8s.api.core.v1.Affinity")]
Toleration = Annotated[dict[str, Any], kubernetes_type("io.k8s.api.core.v1.Toleration")]
SchedulingGate = Annotated[dict[str, Any], kubernetes_type("io.k8s.api.core.v1.PodSchedulingGate")]
JobSpecData = Annotated[dict[str, Any], kubernetes_type("io.k8s.api.batch.v1.JobSpec")]

_PATCH_SHAPE = (
    "spec.runtimePatches: [{manager: <you>/<tool>, trainingRuntimeSpec: {template: {spec: "
    "{replicatedJobs: [{name: node, template: {spec: {template: {metadata: …, spec: …}}}}]}}}}]"
)
REMOVED_FIELDS: Final = {
    "podSpecOverrides": (
        "Trainer v2.0's spec.podSpecOverrides was replaced in v2.1 and removed in v2.2",
        f"move each override into {_PATCH_SHAPE}; targetJobs[].name becomes replicatedJobs[].name",
    ),
    "podTemplateOverrides": (
        "Trainer v2.1's spec.podTemplateOverrides was removed in v2.2",
        f"move each override into {_PATCH_SHAPE}; targetJobs[].name becomes replicatedJobs[].name",
    ),
    "labels": (
        "Trainer v2.0/v2.1's spec.labels was removed in v2.2",
        "set them under spec.runtimePatches[].trainingRuntimeSpec.template.metadata.labels "
        "(JobSet) or …replicatedJobs[].template.spec.template.metadata.labels (pods)",
    ),
    "annotations": (
        "Trainer v2.0/v2.1's spec.annotations was removed in v2.2",
        "set them under spec.runtimePatches[].trainingRuntimeSpec.template.metadata.annotations",
    ),
}
"""TrainJob ``spec`` fields of older v2 releases: wire name → (what happened, the fix)."""

IMMUTABLE_FIELDS: Final = (
    "spec.runtimeRef",
    "spec.initializer",
    "spec.trainer",
    "spec.activeDeadlineSeconds",
    "spec.managedBy",
    "spec.runtimePatches[].manager",
    "spec.runtimePatches[].trainingRuntimeSpec.template.spec.replicatedJobs[].template.spec"
    ".template.spec.{serviceAccountName,volumes,initContainers,containers,imagePullSecrets,"
    "securityContext,terminationGracePeriodSeconds}",
)
"""TrainJob fields the v2.3.0 CRD refuses to change once created (``self == oldSelf``); a
change means deleting and re-creating the job. ``spec.runtimePatches`` as a whole may change
only while the TrainJob is (or becomes) suspended and none of its Jobs is active."""


def _refuse(field: str) -> BeforeValidator:
    message, fix = REMOVED_FIELDS[field]

    def refuse(value: Any) -> Any:
        raise PydanticCustomError(
            "trainjob_removed_field", "{message}; fix: {fix}", {"message": message, "fix": fix}
        )

    return BeforeValidator(refuse)


def _removed(field: str) -> Any:
    return Field(default=None, exclude=True, description=REMOVED_FIELDS[field][0] + ".")


def _refuse_torch(field: str) -> BeforeValidator:
    def refuse(value: Any) -> Any:
        raise PydanticCustomError(
            "trainjob_removed_field",
            "mlPolicy.torch.{field} was removed in Trainer v2.2; fix: {fix}",
            {
                "field": field,
                "fix": "remove it; set trainer.numProcPerNode on the TrainJob instead"
                if field == "numProcPerNode"
                else "remove it; Trainer v2.2+ has no elastic torch policy",
            },
        )

    return BeforeValidator(refuse)


# --------------------------------------------------------------------------- runtimes


class EnvInjectionTarget(K8sModel):
    """One replicated job's containers that get the torch env too."""

    job_name: str = Field(min_length=1, max_length=253, description="Replicated job name.")
    container_names: list[Annotated[str, Field(max_length=63)]] = Field(
        min_length=1,
        max_length=8,
        description="Containers of that job (never ``node``: it always gets the env).",
    )


class EnvInjection(K8sModel):
    """Which other containers get the torch policy's env (v2.3)."""

    targets: list[EnvInjectionTarget] | None = Field(
        default=None, max_length=16, description="Extra containers; default none."
    )


class TorchPolicy(K8sModel):
    """``mlPolicy.torch``: torchrun's PET_* env in the trainer's ``node`` container."""

    env_injection: EnvInjection | None = Field(
        default=None, description="Further containers that get PET_*; default none."
    )
    num_proc_per_node: Annotated[Any, _refuse_torch("numProcPerNode")] = Field(
        default=None, exclude=True, description="Removed in v2.2; refused."
    )
    elastic_policy: Annotated[Any, _refuse_torch("elasticPolicy")] = Field(
        default=None, exclude=True, description="Removed in v2.2; refused."
    )


class MPIPolicy(K8sModel):
    """``mlPolicy.mpi``: an SSH key pair, a hostfile and OpenMPI env for the launcher."""

    num_proc_per_node: int | None = Field(
        default=None, description="Slots per node in the hostfile; default 1."
    )
    mpi_implementation: Literal["OpenMPI", ""] | None = Field(
        default=None, description="Only OpenMPI is implemented; default OpenMPI."
    )
    ssh_auth_mount_path: str | None = Field(
        default=None, max_length=4096, description="Where the SSH keys go; default /root/.ssh."
    )
    run_launcher_as_node: bool | None = Field(
        default=None, description="The launcher also trains (is in the hostfile); default false."
    )


class FluxPolicy(K8sModel):
    """``mlPolicy.flux``: accepted as input; the jobset target does not expand it yet."""

    num_proc_per_node: int | None = Field(
        default=None, ge=1, description="Processes per node; default 1."
    )


class EmptyPolicy(K8sModel):
    """``mlPolicy.jax`` / ``mlPolicy.xgboost``: no settings."""


class MLPolicy(K8sModel):
    """``spec.mlPolicy``: node count and at most one framework policy."""

    num_nodes: int | None = Field(default=None, description="Training nodes; default 1.")
    torch: TorchPolicy | None = Field(default=None, description="PyTorch (torchrun) policy.")
    mpi: MPIPolicy | None = Field(default=None, description="MPI policy.")
    jax: EmptyPolicy | None = Field(default=None, description="JAX policy.")
    xgboost: EmptyPolicy | None = Field(default=None, description="XGBoost policy.")
    flux: FluxPolicy | None = Field(default=None, description="Flux Framework policy.")

    @model_validator(mode="after")
    def _one_policy(self) -> MLPolicy:
        set_ = [n for n in ("torch", "mpi", "jax", "xgboost", "flux") if getattr(self, n)]
        if len(set_) > 1:
            raise PydanticCustomError(
                "trainjob_policies",
                "only one of the policy can be configured (got {names}); fix: keep one",
                {"names": ", ".join(set_)},
            )
        return self

    @property
    def kind(self) -> str:
        """``torch``, ``mpi``, ``jax``, ``xgboost``, ``flux`` or ``""`` (plain)."""
        for name in ("torch", "mpi", "jax", "xgboost", "flux"):
            if getattr(self, name) is not None:
                return name
        return ""


class CoschedulingPolicy(K8sModel):
    """scheduler-plugins coscheduling: a ``scheduling.x-k8s.io`` PodGroup."""

    schedule_timeout_seconds: int | None = Field(
        default=None, description="How long the gang may wait to be scheduled; default 60."
    )


class NetworkTopology(K8sModel):
    """Volcano network topology of the PodGroup."""

    mode: Literal["hard", "soft"] | None = Field(default=None, description="Default hard.")
    highest_tier_allowed: int | None = Field(default=None, description="Default 1.")


class VolcanoPolicy(K8sModel):
    """Volcano: a ``scheduling.volcano.sh`` PodGroup."""

    network_topology: NetworkTopology | None = Field(
        default=None, description="Network topology constraints; default none."
    )


class PodGroupPolicy(K8sModel):
    """``spec.podGroupPolicy``: gang scheduling by coscheduling or Volcano."""

    coscheduling: CoschedulingPolicy | None = Field(default=None, description="Coscheduling.")
    volcano: VolcanoPolicy | None = Field(default=None, description="Volcano.")


class TemplateMeta(K8sModel):
    """Embedded object metadata: only labels and annotations matter."""

    labels: dict[str, str] | None = Field(default=None, description="Labels.")
    annotations: dict[str, str] | None = Field(default=None, description="Annotations.")
    name: str | None = Field(default=None, description="Ignored by the controllers.")
    namespace: str | None = Field(default=None, description="Ignored by the controllers.")
    finalizers: list[str] | None = Field(default=None, description="Ignored by the controllers.")


class DependsOn(K8sModel):
    """A replicated job this one waits for."""

    name: str = Field(description="The replicated job waited for.")
    status: Literal["Ready", "Complete"] = Field(description="What it must reach.")


class JobTemplate(K8sModel):
    """A batch/v1 JobTemplateSpec."""

    metadata: TemplateMeta | None = Field(default=None, description="Job labels, annotations.")
    spec: JobSpecData = Field(description="The batch/v1 JobSpec, pod template included.")


class ReplicatedJob(K8sModel):
    """One replicated job of the JobSet (``jobset.x-k8s.io/v1alpha2``)."""

    name: str = Field(description="Its name: ``node``, ``launcher``, ``dataset-initializer`` …")
    group_name: str | None = Field(default=None, description="JobSet group; default 'default'.")
    template: JobTemplate = Field(description="The Job each replica is made from.")
    replicas: int | None = Field(default=None, description="Jobs made; default 1.")
    depends_on: list[DependsOn] | None = Field(default=None, description="Jobs waited for.")


class Network(K8sModel):
    """The JobSet's pod DNS."""

    enable_dns_hostnames: bool | None = Field(default=None, description="Default true.")
    subdomain: str | None = Field(default=None, description="Default the JobSet name.")
    publish_not_ready_addresses: bool | None = Field(default=None, description="Default true.")


class SuccessPolicy(K8sModel):
    """When the JobSet has succeeded."""

    operator: Literal["All", "Any"] = Field(description="All or any of the targeted jobs.")
    target_replicated_jobs: list[str] | None = Field(default=None, description="Default all.")


class JobSetSpec(K8sModel):
    """The JobSet spec (``jobset.x-k8s.io/v1alpha2``, JobSet v0.12.0) a runtime carries."""

    replicated_jobs: list[ReplicatedJob] | None = Field(
        default=None, description="The replicated jobs, in order."
    )
    network: Network | None = Field(default=None, description="Pod DNS.")
    success_policy: SuccessPolicy | None = Field(default=None, description="Default All.")
    failure_policy: dict[str, Any] | None = Field(default=None, description="Restarts.")
    startup_policy: dict[str, Any] | None = Field(default=None, description="Start order.")
    suspend: bool | None = Field(default=None, description="Set by the TrainJob's suspend.")
    coordinator: dict[str, Any] | None = Field(default=None, description="Coordinator pod.")
    managed_by: str | None = Field(default=None, description="JobSet's managedBy.")
    ttl_seconds_after_finished: int | None = Field(default=None, ge=0, description="Clean-up.")
    volume_claim_policies: list[dict[str, Any]] | None = Field(
        default=None, description="PVCs JobSet creates and mounts."
    )


class JobSetTemplate(K8sModel):
    """``spec.template``: the JobSet's metadata and spec."""

    metadata: TemplateMeta | None = Field(default=None, description="JobSet labels/annotations.")
    spec: JobSetSpec | None = Field(default=None, description="The JobSet spec.")


class TrainingRuntimeSpec(K8sModel):
    """``spec`` of a (Cluster)TrainingRuntime."""

    ml_policy: MLPolicy | None = Field(default=None, description="ML policy; default plain.")
    pod_group_policy: PodGroupPolicy | None = Field(default=None, description="Gang policy.")
    template: JobSetTemplate | None = Field(default=None, description="The JobSet template.")


class TrainingRuntime(JobResource):
    """A namespaced TrainingRuntime: used by TrainJobs of its namespace."""

    api_version: Literal["trainer.kubeflow.org/v1alpha1"] = "trainer.kubeflow.org/v1alpha1"
    kind: Literal["TrainingRuntime"] = "TrainingRuntime"
    spec: TrainingRuntimeSpec = Field(description="The runtime.")


class ClusterTrainingRuntime(JobResource):
    """A cluster-scoped ClusterTrainingRuntime: used by TrainJobs of every namespace."""

    api_version: Literal["trainer.kubeflow.org/v1alpha1"] = "trainer.kubeflow.org/v1alpha1"
    kind: Literal["ClusterTrainingRuntime"] = "ClusterTrainingRuntime"
    spec: TrainingRuntimeSpec = Field(description="The runtime.")


Runtime = TrainingRuntime | ClusterTrainingRuntime


# --------------------------------------------------------------------------- TrainJob


class RuntimeRef(K8sModel):
    """``spec.runtimeRef``: the runtime the TrainJob runs on."""

    name: str = Field(min_length=1, max_length=253, description="Runtime name. Required.")
    api_group: str | None = Field(default=None, description=f"Default {API_GROUP!r}.")
    kind: str | None = Field(default=None, description="Default 'ClusterTrainingRuntime'.")

    @property
    def kind_or_default(self) -> str:
        return CLUSTER_RUNTIME_KIND.kind if self.kind is None else self.kind

    @property
    def api_group_or_default(self) -> str:
        return API_GROUP if self.api_group is None else self.api_group


class SecretRef(K8sModel):
    """A Secret in the TrainJob's namespace."""

    name: str = Field(default="", description="Secret name.")


class InitializerSource(K8sModel):
    """``spec.initializer.dataset`` / ``.model``."""

    storage_uri: str | None = Field(
        default=None,
        max_length=2048,
        pattern=r"^$|^[A-Za-z][A-Za-z0-9+.-]*://.+$",
        description="Where to fetch from (``hf://…``, ``s3://…``); becomes STORAGE_URI.",
    )
    env: list[EnvVar] | None = Field(default=None, max_length=128, description="More env.")
    secret_ref: SecretRef | None = Field(default=None, description="Secret as envFrom.")


class Initializer(K8sModel):
    """``spec.initializer``: dataset and model download jobs."""

    dataset: InitializerSource | None = Field(default=None, description="Dataset initializer.")
    model: InitializerSource | None = Field(default=None, description="Model initializer.")


class Trainer(K8sModel):
    """``spec.trainer``: overrides of the trainer ``node`` container and the node count."""

    image: str | None = Field(default=None, max_length=500, description="Default the runtime's.")
    command: list[str] | None = Field(default=None, max_length=128, description="Entrypoint.")
    args: list[str] | None = Field(default=None, max_length=128, description="Arguments.")
    env: list[EnvVar] | None = Field(default=None, max_length=128, description="Merged env.")
    num_nodes: int | None = Field(default=None, description="Default the runtime's numNodes.")
    resources_per_node: Resources | None = Field(default=None, description="Merged resources.")
    num_proc_per_node: int | None = Field(
        default=None, description="Processes per node; default torch ``auto``, MPI the runtime's."
    )


class ContainerPatch(K8sModel):
    """A container of a runtime patch (it must exist in the runtime)."""

    name: str = Field(min_length=1, max_length=253, description="The container.")
    env: list[EnvVar] | None = Field(default=None, description="Env (not for node/initializers).")
    volume_mounts: list[VolumeMount] | None = Field(default=None, description="Mounts.")
    security_context: SecurityContext | None = Field(default=None, description="Security.")


class PodSpecPatch(K8sModel):
    """The pod spec fields a runtime patch may set."""

    service_account_name: str | None = Field(default=None, description="Service account.")
    volumes: list[Volume] | None = Field(default=None, max_length=128, description="Volumes.")
    init_containers: list[ContainerPatch] | None = Field(default=None, description="Init.")
    containers: list[ContainerPatch] | None = Field(default=None, description="Containers.")
    image_pull_secrets: list[SecretRef] | None = Field(default=None, description="Pull secrets.")
    security_context: PodSecurityContext | None = Field(default=None, description="Security.")
    node_selector: dict[str, str] | None = Field(default=None, description="Node selector.")
    affinity: Affinity | None = Field(default=None, description="Affinity.")
    tolerations: list[Toleration] | None = Field(default=None, description="Tolerations.")
    scheduling_gates: list[SchedulingGate] | None = Field(default=None, description="Gates.")
    termination_grace_period_seconds: int | None = Field(default=None, ge=0, description="Grace.")


class PodTemplatePatch(K8sModel):
    """A pod template patch."""

    metadata: TemplateMeta | None = Field(default=None, description="Pod labels/annotations.")
    spec: PodSpecPatch | None = Field(default=None, description="Pod spec fields.")


class JobSpecPatch(K8sModel):
    """A Job spec patch: only its pod template."""

    template: PodTemplatePatch | None = Field(default=None, description="Pod template patch.")


class JobTemplatePatch(K8sModel):
    """A Job template patch."""

    metadata: TemplateMeta | None = Field(default=None, description="Job labels/annotations.")
    spec: JobSpecPatch | None = Field(default=None, description="Job spec patch.")


class ReplicatedJobPatch(K8sModel):
    """A patch of one replicated job, by name."""

    name: str = Field(min_length=1, max_length=253, description="The replicated job.")
    template: JobTemplatePatch | None = Field(default=None, description="Its patch.")


class JobSetSpecPatch(K8sModel):
    """A JobSet spec patch: only replicated jobs."""

    replicated_jobs: list[ReplicatedJobPatch] | None = Field(
        default=None, max_length=100, description="Patches by name."
    )


class JobSetTemplatePatch(K8sModel):
    """A patch of the runtime's JobSet template."""

    metadata: TemplateMeta | None = Field(default=None, description="JobSet labels/annotations.")
    spec: JobSetSpecPatch | None = Field(default=None, description="JobSet spec patch.")


class TrainingRuntimeSpecPatch(K8sModel):
    """A patch of the runtime spec: only its template."""

    template: JobSetTemplatePatch | None = Field(default=None, description="Template patch.")


class RuntimePatch(K8sModel):
    """``spec.runtimePatches[]``: one manager's changes to the runtime, for this job only."""

    manager: str = Field(
        min_length=1, max_length=253, description="Who owns it (``example.io/tool``). Required."
    )
    # A YAML loader reads an unquoted RFC 3339 time as a datetime; both are the same time.
    time: datetime | str | None = Field(
        default=None, description="When the patch last changed; set by the webhook."
    )
    training_runtime_spec: TrainingRuntimeSpecPatch | None = Field(
        default=None, description="The patch."
    )


class TrainJobSpec(K8sModel):
    """``spec`` of a TrainJob."""

    runtime_ref: RuntimeRef = Field(description="The runtime. Required.")
    initializer: Initializer | None = Field(default=None, description="Download jobs.")
    trainer: Trainer | None = Field(default=None, description="Trainer overrides.")
    runtime_patches: list[RuntimePatch] | None = Field(
        default=None, max_length=16, description="Per-job runtime patches; default none."
    )
    suspend: bool | None = Field(default=None, description="Default false.")
    active_deadline_seconds: int | None = Field(
        default=None, ge=1, description="Seconds until the job fails; default none."
    )
    managed_by: Literal["trainer.kubeflow.org/trainjob-controller", "kueue.x-k8s.io/multikueue"] | (
        None
    ) = Field(default=None, description=f"Default {DEFAULT_MANAGED_BY!r}.")
    pod_spec_overrides: Annotated[Any, _refuse("podSpecOverrides")] = _removed("podSpecOverrides")
    pod_template_overrides: Annotated[Any, _refuse("podTemplateOverrides")] = _removed(
        "podTemplateOverrides"
    )
    labels: Annotated[Any, _refuse("labels")] = _removed("labels")
    annotations: Annotated[Any, _refuse("annotations")] = _removed("annotations")

    @model_validator(mode="after")
    def _unique_managers(self) -> TrainJobSpec:
        managers = [p.manager for p in self.runtime_patches or []]
        for manager in managers:
            if managers.count(manager) > 1:
                raise PydanticCustomError(
                    "trainjob_duplicate_manager",
                    "runtimePatches is a map keyed by manager; {manager!r} appears twice; "
                    "fix: merge the two patches",
                    {"manager": manager},
                )
        return self


class TrainJob(JobResource):
    """A TrainJob exactly as Trainer v2.3.0 accepts it."""

    api_version: Literal["trainer.kubeflow.org/v1alpha1"] = "trainer.kubeflow.org/v1alpha1"
    kind: Literal["TrainJob"] = "TrainJob"
    spec: TrainJobSpec = Field(description="The job.")

    @property
    def suspended(self) -> bool:
        return bool(self.spec.suspend)

    @property
    def managed_by(self) -> str:
        return self.spec.managed_by or DEFAULT_MANAGED_BY
