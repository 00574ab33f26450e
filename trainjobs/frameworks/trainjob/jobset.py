"""What the Kubeflow Trainer v2.3.0 controller creates for a TrainJob, as a JobSetPlan (the
``jobset`` target writes it, ``targets.jobset``).

:func:`jobset_plan` is a pure function of the TrainJob and its runtime that follows
the controller's steps (kubeflow-operators.md §7.3, §7.4; Trainer v2.3.0
``pkg/runtime/core/trainingruntime.go``, ``pkg/runtime/framework/plugins/*``):

1. the runtime's JobSet template, with the defaults the API server stored in the runtime
   (``replicas: 1``, ``groupName: default`` …), and each ``runtimePatches`` entry applied
   in order as a strategic merge patch; JobSet labels/annotations = the template's merged
   with the patches';
2. one *pod set* per replicated job: its pod count is ``parallelism`` (default 1), for the
   trainer job the runtime's ``mlPolicy.numNodes``; ``trainer.resourcesPerNode`` is merged
   into the trainer's ``node`` container;
3. the ML policy (torch, mpi, jax, xgboost, plain) sets the node count from
   ``trainer.numNodes`` and injects its env, ports, volumes and objects;
4. the gang policy labels or annotates every pod and makes a PodGroup;
5. every replicated job gets ``parallelism`` = ``completions`` = its pod count; initializer
   and trainer jobs ``replicas: 1``; the trainer's ``node`` container the TrainJob's image,
   command, args and env; initializers STORAGE_URI, env and the secret as ``envFrom``;
   the JobSet ``suspend`` = the TrainJob's.

Deviations, all deliberate:

* No ownerReferences: there is no TrainJob object on this target (Pulumi owns the
  objects, as on every ``pods`` target).
* The MPI SSH Secret (written by ``targets.objects``) carries placeholders
  (``trainjobs.k8s.generated``), never a key:
  the key pair is generated at apply time and held as a Pulumi secret. It is written with
  ``stringData`` where the controller writes ``data``; the stored Secret is the same.
* The controller's runtime snapshot ConfigMap (``<tj>-runtime-snapshot``, its own record
  of the runtime it used) is not made: nothing reads it but the controller.
* Empty objects the controller's Go round trip adds (``resources: {}``, pod template
  ``metadata: {}``) are left out; they mean nothing.
* With XGBoost and a ``trainer.env``, the controller's plugin order (a Go map) decides
  whether the user's env or the DMLC_* env comes first; trainjobs always puts the
  user's first, as the torch plugin does.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Final

from trainjobs import limits
from trainjobs.errors import Finding, Rule, Severity
from trainjobs.frameworks.trainjob._merge import (
    by_mount_path,
    by_name,
    by_port_or_name,
    strategic_merge,
    upsert,
)
from trainjobs.frameworks.trainjob.model import (
    DEFAULT_MANAGED_BY,
    MLPolicy,
    Runtime,
    TrainJob,
)
from trainjobs.k8s.data import deep_copy
from trainjobs.k8s.quantity import format_like, quantity_or_none
from trainjobs.plan.gang import GROUP_NAME_ANNOTATION, POD_GROUP_LABEL, QUEUE_ANNOTATION
from trainjobs.plan.jobset import JobSetPlan, MpiFiles, PodGroupPlan
from trainjobs.plan.memo import Identity, remembered
from trainjobs.plan.trainer import ANCESTOR_LABEL, NODE_CONTAINER, TRAINER_PORT

__all__ = [
    "ANCESTOR_LABEL",
    "COMPLETION_INDEX_FIELD",
    "NODE",
    "TRAINER_PORT",
    "jobset_plan",
    "master_address",
    "mpi_hostfile_name",
    "mpi_secret_name",
]

TRAINER: Final = "trainer"
DATASET: Final = "dataset-initializer"
MODEL: Final = "model-initializer"
NODE: Final = NODE_CONTAINER
"""The trainer job's container the controller configures, and the MPI node job's name."""
LAUNCHER: Final = "launcher"
COMPLETION_INDEX_FIELD: Final = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
STORAGE_URI: Final = "STORAGE_URI"
DEFAULT_SCHEDULE_TIMEOUT: Final = 60

MPI_SSH_VOLUME: Final = "mpi-ssh-auth"
MPI_HOSTFILE_VOLUME: Final = "mpi-hostfile"
MPI_HOSTFILE_DIR: Final = "/etc/mpi"
MPI_HOSTFILE: Final = "hostfile"
DEFAULT_SSH_PATH: Final = "/root/.ssh"
TORCHTUNE_ENTRYPOINT: Final = ["tune", "run"]
TORCHTUNE_IMMUTABLE: Final = frozenset(
    {"output_dir", "tokenizer.path", "checkpointer.checkpoint_dir", "tokenizer.merges_file"}
)

# What the Trainer controller refuses or leaves undone while it builds the JobSet, and what
# the jobset and pods targets cannot do, declared once.
ENV_INJECTION_TARGET: Final = Rule(
    "trainjob.env_injection_target",
    "the runtime's mlPolicy.torch.envInjection.targets[{index}] names container {name!r} of "
    "replicated job {job!r}, which the runtime template does not have",
    hint="fix the runtime: name a replicated job and a container it has",
)
MPI_IMPLEMENTATION: Final = Rule(
    "trainjob.mpi_implementation",
    "the runtime's mlPolicy.mpi.mpiImplementation is empty: the Trainer v2.3.0 controller "
    "implements only OpenMPI and fails the TrainJob",
    hint="set mpiImplementation: OpenMPI in the runtime (or leave it unset)",
)
MANAGED_BY: Final = Rule(
    "trainjob.managed_by",
    "the TrainJob is managed by {manager}: this cluster's Trainer controller creates no JobSet "
    "for it, so the jobset and pods targets cannot either",
    hint="use the operator target (MultiKueue dispatches the TrainJob to a worker cluster), or "
    f"remove managedBy (default {DEFAULT_MANAGED_BY}) to run it here",
)
FLUX_UNSUPPORTED: Final = Rule(
    "trainjob.flux_unsupported",
    "the runtime's mlPolicy is flux: trainjobs does not yet expand the Flux plugin (its "
    "installer init container, broker config and curve keys)",
    hint="use the operator target for Flux runtimes",
)
DEADLINE_CONTROLLER: Final = Rule(
    "trainjob.deadline_controller",
    "the Trainer controller itself fails the TrainJob at its deadline; the JobSet carries no "
    "deadline, so on this target nothing stops the job then",
    hint="use the operator target, or set activeDeadlineSeconds in the runtime's replicated "
    "Job templates",
    severity=Severity.WARNING,
)


def master_address(job: TrainJob) -> str:
    """``<tj>-node-0-0.<tj>``: the first trainer pod, where torch, JAX and XGBoost meet.

    The controller hard-codes the TrainJob name as the subdomain here (a runtime's own
    ``network.subdomain`` does not change it)."""
    return f"{job.name}-{NODE}-0-0.{job.name}"


def mpi_secret_name(job: str) -> str:
    """``<tj>-mpi-ssh-auth``: the Secret with the job's SSH key pair."""
    return f"{job}-mpi-ssh-auth"


def mpi_hostfile_name(job: str) -> str:
    """``<tj>-mpi-hostfile``: the ConfigMap with the MPI hostfile."""
    return f"{job}-mpi-hostfile"


def _env(name: str, value: str) -> dict[str, Any]:
    return {"name": name, "value": value}


def _index_env(name: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": COMPLETION_INDEX_FIELD}}}


@dataclass
class _PodSet:
    """One replicated job as the controller sees it (``runtime.PodSet``)."""

    index: int
    name: str
    ancestor: str | None
    count: int
    requests: dict[str, tuple[Fraction, Any]] = field(default_factory=dict)


@dataclass
class _Build:
    """The JobSet under construction and what the plugins decided."""

    job: TrainJob
    runtime: Runtime
    ml: MLPolicy | None
    spec: dict[str, Any]
    pod_sets: list[_PodSet]
    labels: dict[str, str]
    annotations: dict[str, str]
    pod_labels: dict[str, str] = field(default_factory=dict)
    pod_annotations: dict[str, str] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    torchtune_command: list[str] | None = None
    """The trainer's command the torchtune rule made; None: the TrainJob's own."""
    mpi_slots: int = 1
    """MPI slots per node the MPI policy settled on."""

    def rjob(self, pod_set: _PodSet) -> dict[str, Any]:
        rjobs: list[dict[str, Any]] = self.spec["replicatedJobs"]
        return rjobs[pod_set.index]

    def pod_spec(self, pod_set: _PodSet) -> dict[str, Any]:
        return _pod_spec(self.rjob(pod_set))

    def by_ancestor(self, ancestor: str) -> _PodSet | None:
        return next((p for p in self.pod_sets if p.ancestor == ancestor), None)

    def by_name(self, name: str) -> _PodSet | None:
        return next((p for p in self.pod_sets if p.name == name), None)


def _pod_spec(rjob: dict[str, Any]) -> dict[str, Any]:
    job_spec = rjob.setdefault("template", {}).setdefault("spec", {})
    pod_spec: dict[str, Any] = job_spec.setdefault("template", {}).setdefault("spec", {})
    return pod_spec


def _container(pod_spec: Mapping[str, Any], name: str, init: bool = False) -> dict[str, Any] | None:
    keys = ("containers", "initContainers") if init else ("containers",)
    for key in keys:
        for container in pod_spec.get(key) or []:
            if isinstance(container, dict) and container.get("name") == name:
                return container
    return None


def _upsert_env(container: dict[str, Any], env: list[dict[str, Any]]) -> None:
    if env:
        container["env"] = upsert(container.get("env") or [], env, by_name)


def _ancestor(rjob: Mapping[str, Any]) -> str | None:
    labels = ((rjob.get("template") or {}).get("metadata") or {}).get("labels") or {}
    value = labels.get(ANCESTOR_LABEL)
    return value if isinstance(value, str) else None


# ------------------------------------------------------------------- step 1: the template


def _runtime_defaults(spec: dict[str, Any]) -> None:
    """The defaults the API server stores in a runtime from its CRD's JobSet schema."""
    for rjob in spec.get("replicatedJobs") or []:
        rjob.setdefault("groupName", "default")
        rjob.setdefault("replicas", 1)
    failure = spec.get("failurePolicy")
    if isinstance(failure, dict):
        failure.setdefault("restartStrategy", "Recreate")
    for policy in spec.get("volumeClaimPolicies") or []:
        retention = policy.get("retentionPolicy") if isinstance(policy, dict) else None
        if isinstance(retention, dict):
            retention.setdefault("whenDeleted", "Delete")


def _template(
    job: TrainJob, runtime: Runtime
) -> tuple[dict[str, Any], dict[str, str], dict[str, str]]:
    template = runtime.spec.template
    spec = template.spec.to_manifest() if template and template.spec else {}
    meta = template.metadata if template else None
    labels = dict(meta.labels or {}) if meta else {}
    annotations = dict(meta.annotations or {}) if meta else {}
    _runtime_defaults(spec)
    order = {rjob.get("name"): i for i, rjob in enumerate(spec.get("replicatedJobs") or [])}
    for patch in job.spec.runtime_patches or []:
        template_patch = (
            patch.training_runtime_spec.template if patch.training_runtime_spec else None
        )
        if template_patch is None:
            continue
        if template_patch.metadata:
            labels.update(template_patch.metadata.labels or {})
            annotations.update(template_patch.metadata.annotations or {})
        if template_patch.spec is not None:
            spec = strategic_merge(spec, template_patch.spec.to_manifest())
    # The controller sorts the merged jobs back into the runtime's order (an unknown name,
    # which its webhook refuses, sorts as the first).
    spec["replicatedJobs"] = sorted(
        spec.get("replicatedJobs") or [], key=lambda rjob: order.get(rjob.get("name"), 0)
    )
    return spec, labels, annotations


# --------------------------------------------------------------------- step 2: pod sets


def _pod_requests(pod_spec: Mapping[str, Any]) -> dict[str, tuple[Fraction, Any]]:
    """What one pod requests (``resourcehelpers.PodRequests``): the containers' requests
    summed, raised to any single init container's; limits do not count."""
    total: dict[str, tuple[Fraction, Any]] = {}
    for name, value, raw in _requests(pod_spec, "containers"):
        before = total.get(name)
        total[name] = (value + before[0], before[1]) if before else (value, raw)
    for name, value, raw in _requests(pod_spec, "initContainers"):
        if name not in total or value > total[name][0]:
            total[name] = (value, raw)
    return total


def _requests(pod_spec: Mapping[str, Any], key: str) -> Iterator[tuple[str, Fraction, Any]]:
    """Each request of the ``key`` containers that is a quantity: resource name, amount,
    and the value as written."""
    for container in pod_spec.get(key) or []:
        if not isinstance(container, dict):
            continue
        for name, raw in ((container.get("resources") or {}).get("requests") or {}).items():
            value = quantity_or_none(raw)
            if value is not None:
                yield name, value, raw


def _pod_sets(build: _Build) -> None:
    job, ml = build.job, build.ml
    per_node = job.spec.trainer.resources_per_node if job.spec.trainer else None
    launcher_as_node = bool(ml and ml.mpi and ml.mpi.run_launcher_as_node)
    for index, rjob in enumerate(build.spec["replicatedJobs"]):
        name = str(rjob.get("name"))
        ancestor = _ancestor(rjob)
        job_spec = (rjob.get("template") or {}).get("spec") or {}
        count = job_spec.get("parallelism")
        count = count if isinstance(count, int) else 1
        if ancestor == TRAINER and ml is not None:
            count = ml.num_nodes if ml.num_nodes is not None else 1
        is_trainer = ancestor == TRAINER and ml is not None
        if per_node is not None and (is_trainer or (launcher_as_node and name == NODE)):
            node = _container(_pod_spec(rjob), NODE)
            if node is not None:
                merged = strategic_merge(node.get("resources") or {}, per_node)
                merged = {k: v for k, v in merged.items() if v not in ({}, [], None)}
                if merged:
                    node["resources"] = merged
        pod_set = _PodSet(index, name, ancestor, max(count, 1))
        pod_set.requests = _pod_requests(_pod_spec(rjob))
        build.pod_sets.append(pod_set)


# ------------------------------------------------------------------ step 3: ML policies


def _runtime_resources(build: _Build) -> dict[str, Any]:
    """``ExtractResourcePerNodeFromRuntime``: the resources of the ``node`` container of the
    first job named ``node`` or labelled trainer that has one — none counts as empty (the
    controller's Go round trip gives every container a ``resources`` object)."""
    for rjob in build.spec["replicatedJobs"]:
        if rjob.get("name") != NODE and _ancestor(rjob) != TRAINER:
            continue
        node = _container(_pod_spec(rjob), NODE)
        if node is not None:
            resources: dict[str, Any] = node.get("resources") or {}
            return resources
    return {}


def _resources_per_node(build: _Build) -> dict[str, Any]:
    trainer = build.job.spec.trainer
    if trainer is not None and trainer.resources_per_node is not None:
        return dict(trainer.resources_per_node)
    return _runtime_resources(build)


def gpus_per_node(resources: Mapping[str, Any]) -> int:
    """The first resource whose name has ``gpu`` in it: requests, else limits (whole units,
    rounded up, as ``Quantity.Value``)."""

    def first(values: Any) -> int:
        for name, raw in (values or {}).items():
            if "gpu" in str(name).lower():
                value = quantity_or_none(raw)
                return _ceil(value) if value is not None else 0
        return 0

    return first(resources.get("requests")) or first(resources.get("limits"))


def cpus_per_node(resources: Mapping[str, Any]) -> int:
    """CPU requests (rounded up), else limits, else 0."""
    for key in ("requests", "limits"):
        raw = (resources.get(key) or {}).get("cpu")
        value = quantity_or_none(raw) if raw is not None else None
        if value:
            return _ceil(value)
    return 0


def _ceil(value: Fraction) -> int:
    return -(-value.numerator // value.denominator)


def _set_trainer_count(build: _Build, ancestor_ps: _PodSet | None) -> None:
    trainer = build.job.spec.trainer
    if ancestor_ps is not None and trainer is not None and trainer.num_nodes is not None:
        ancestor_ps.count = trainer.num_nodes


def _torch(build: _Build) -> None:
    job, ml = build.job, build.ml
    assert ml is not None and ml.torch is not None
    trainer_ps = build.by_ancestor(TRAINER)
    _set_trainer_count(build, trainer_ps)
    trainer = job.spec.trainer
    nproc: int | str = "auto"
    if trainer is not None and trainer.num_proc_per_node is not None:
        nproc = trainer.num_proc_per_node
    resources = _resources_per_node(build)
    gpus = gpus_per_node(resources)
    if nproc == "auto" and gpus == 0:
        nproc = max(1, cpus_per_node(resources))
    nodes = trainer_ps.count if trainer_ps else 1
    pet = [
        _env("PET_NNODES", str(nodes)),
        _env("PET_NPROC_PER_NODE", str(nproc)),
        _index_env("PET_NODE_RANK"),
    ]
    master = [
        _env("PET_MASTER_ADDR", master_address(job)),
        _env("PET_MASTER_PORT", str(TRAINER_PORT)),
    ]
    node = _container(build.pod_spec(trainer_ps), NODE) if trainer_ps and trainer else None
    if node is not None and trainer is not None:
        _upsert_env(node, [dict(e) for e in trainer.env or []])
        _upsert_env(node, pet)
        if list(trainer.command or []) != TORCHTUNE_ENTRYPOINT:
            _upsert_env(node, master)
        else:
            build.torchtune_command = _torchtune_command(build, nodes, nproc, gpus)
        node["ports"] = upsert(
            node.get("ports") or [], [{"containerPort": TRAINER_PORT}], by_port_or_name
        )
    targets = ml.torch.env_injection.targets if ml.torch.env_injection else None
    for t_index, target in enumerate(targets or []):
        pod_set = build.by_name(target.job_name)
        for name in target.container_names:
            container = _container(build.pod_spec(pod_set), name, init=True) if pod_set else None
            if container is None:
                facts = {"index": t_index, "name": name, "job": target.job_name}
                build.findings.append(
                    ENV_INJECTION_TARGET.at("spec.runtimeRef", target.to_manifest(), **facts)
                )
                continue
            _upsert_env(container, pet)
            _upsert_env(container, master)


def _torchtune_model(runtime_name: str) -> str:
    parts = runtime_name.split("-")
    if len(parts) != 3:
        return ""
    return f"{parts[1].replace('.', '_')}/{parts[2].upper()}"


def _lora(args: list[str]) -> bool:
    return any("model.lora_attn_modules" in arg for arg in args)


def _bool_arg(args: list[str], item: str) -> bool:
    for arg in args:
        name, sep, value = arg.partition("=")
        if sep and item in name and value.strip().lower() == "true":
            return True
    return False


def _qlora(args: list[str]) -> bool:
    return not _bool_arg(args, "model.use_dora") and _bool_arg(args, "model.quantize_base")


def torchtune_recipe(job: TrainJob, nodes: int, nproc: int | str, gpus: int) -> tuple[str, str]:
    """The torchtune recipe and config the controller picks (``getRecipeAndConfig``)."""
    args = list(job.spec.trainer.args or []) if job.spec.trainer else []
    recipe, suffix = "full_finetune_distributed", "_full"
    single = nproc == 1 or (isinstance(nproc, str) and gpus == 1)
    if nodes == 1 and single:
        if _qlora(args):
            recipe, suffix = "lora_finetune_single_device", "_qlora_single_device"
        elif _lora(args):
            recipe, suffix = "lora_finetune_single_device", "_lora_single_device"
        else:
            recipe, suffix = "full_finetune_single_device", "_full_single_device"
    elif nodes == 1 and _qlora(args):
        recipe, suffix = "lora_finetune_distributed", "_qlora"
    elif nodes == 1 and _lora(args):
        recipe, suffix = "lora_finetune_distributed", "_lora"
    elif nodes > 1:
        suffix = "_full_multinode"
    return recipe, f"{_torchtune_model(job.spec.runtime_ref.name)}{suffix}"


def _torchtune_command(build: _Build, nodes: int, nproc: int | str, gpus: int) -> list[str]:
    job = build.job
    command = list(TORCHTUNE_ENTRYPOINT)
    if nodes > 1 or (isinstance(nproc, int) and nproc > 1) or (isinstance(nproc, str) and gpus > 1):
        command.append(f"--rdzv_endpoint={master_address(job)}:{TRAINER_PORT}")
    recipe, config = torchtune_recipe(job, nodes, nproc, gpus)
    command += [recipe, "--config", config]
    for rjob in build.spec["replicatedJobs"]:
        if _ancestor(rjob) != TRAINER:
            continue
        node = _container(_pod_spec(rjob), NODE)
        for item in (node or {}).get("command") or []:
            if str(item).split("=")[0] in TORCHTUNE_IMMUTABLE:
                command.append(item)
    return command


def _mpi(build: _Build) -> None:
    job, ml = build.job, build.ml
    assert ml is not None and ml.mpi is not None
    policy = ml.mpi
    launcher_as_node = bool(policy.run_launcher_as_node)
    trainer = job.spec.trainer
    node_ps = build.by_name(NODE)
    if trainer is not None and trainer.num_nodes is not None and node_ps is not None:
        node_ps.count = max(trainer.num_nodes - 1, 1) if launcher_as_node else trainer.num_nodes
    slots = policy.num_proc_per_node if policy.num_proc_per_node is not None else 1
    if trainer is not None and trainer.num_proc_per_node is not None:
        slots = trainer.num_proc_per_node
    elif slots == 1:
        gpus = gpus_per_node(_resources_per_node(build))
        if gpus > 1:
            slots = gpus
    implementation = "OpenMPI" if policy.mpi_implementation is None else policy.mpi_implementation
    if implementation != "OpenMPI":
        build.findings.append(MPI_IMPLEMENTATION.at("spec.runtimeRef", implementation))
    mount_path = policy.ssh_auth_mount_path or DEFAULT_SSH_PATH
    secret = mpi_secret_name(job.name)
    ssh_volume = {
        "name": MPI_SSH_VOLUME,
        "secret": {
            "secretName": secret,
            "defaultMode": 0o400,
            "items": [
                {"key": "ssh-privatekey", "path": "id_rsa", "mode": 0o640},
                {"key": "ssh-publickey", "path": "id_rsa.pub", "mode": 0o644},
                {"key": "ssh-publickey", "path": "authorized_keys", "mode": 0o644},
            ],
        },
    }
    hostfile_volume = {
        "name": MPI_HOSTFILE_VOLUME,
        "configMap": {
            "name": mpi_hostfile_name(job.name),
            "items": [{"key": MPI_HOSTFILE, "path": MPI_HOSTFILE, "mode": 0o444}],
        },
    }
    for pod_set in build.pod_sets:
        if pod_set.name not in (NODE, LAUNCHER):
            continue
        pod_spec = build.pod_spec(pod_set)
        volumes = [ssh_volume, hostfile_volume] if pod_set.name == LAUNCHER else [ssh_volume]
        pod_spec["volumes"] = upsert(pod_spec.get("volumes") or [], volumes, by_name)
        for container in pod_spec.get("containers") or []:
            if not isinstance(container, dict) or container.get("name") != NODE:
                continue
            mounts = [{"name": MPI_SSH_VOLUME, "mountPath": mount_path}]
            if pod_set.name == LAUNCHER:
                mounts.append({"name": MPI_HOSTFILE_VOLUME, "mountPath": MPI_HOSTFILE_DIR})
            container["volumeMounts"] = upsert(
                container.get("volumeMounts") or [], mounts, by_mount_path
            )
            if pod_set.name == LAUNCHER and implementation == "OpenMPI":
                _upsert_env(
                    container,
                    [
                        _env(
                            "OMPI_MCA_orte_default_hostfile", f"{MPI_HOSTFILE_DIR}/{MPI_HOSTFILE}"
                        ),
                        _env("OMPI_MCA_orte_keep_fqdn_hostnames", "true"),
                        _env("OMPI_MCA_orte_set_default_slots", str(slots)),
                        _env("OMPI_MCA_plm_rsh_args", "-o ConnectionAttempts=10"),
                    ],
                )
    build.mpi_slots = slots


def _mpi_files(build: _Build) -> MpiFiles:
    job, ml = build.job, build.ml
    assert ml is not None and ml.mpi is not None
    launcher_as_node = bool(ml.mpi.run_launcher_as_node)
    lines = []
    for pod_set in build.pod_sets:
        if pod_set.name == NODE or (launcher_as_node and pod_set.name == LAUNCHER):
            lines += [f"{host} slots={build.mpi_slots}\n" for host in _endpoints(build, pod_set)]
    return MpiFiles(
        secret=mpi_secret_name(job.name),
        config_map=mpi_hostfile_name(job.name),
        hostfile_key=MPI_HOSTFILE,
        hostfile="".join(lines),
    )


def _jax(build: _Build) -> None:
    job = build.job
    trainer_ps = build.by_ancestor(TRAINER)
    _set_trainer_count(build, trainer_ps)
    if job.spec.trainer is None or trainer_ps is None:
        return
    node = _container(build.pod_spec(trainer_ps), NODE)
    if node is None:
        return
    _upsert_env(
        node,
        [
            _env("JAX_NUM_PROCESSES", str(trainer_ps.count)),
            _index_env("JAX_PROCESS_ID"),
            _env("JAX_COORDINATOR_ADDRESS", f"{master_address(job)}:{TRAINER_PORT}"),
        ],
    )
    node["ports"] = upsert(
        node.get("ports") or [], [{"containerPort": TRAINER_PORT}], by_port_or_name
    )


def _plain(build: _Build) -> None:
    """The plain-ML plugin: runs for every runtime but torch, MPI and JAX (so for XGBoost
    and Flux too): node count and the user's env."""
    trainer = build.job.spec.trainer
    trainer_ps = build.by_ancestor(TRAINER)
    _set_trainer_count(build, trainer_ps)
    if trainer is None or trainer_ps is None:
        return
    node = _container(build.pod_spec(trainer_ps), NODE)
    if node is not None:
        _upsert_env(node, [dict(e) for e in trainer.env or []])


def _xgboost(build: _Build) -> None:
    job = build.job
    trainer_ps = build.by_ancestor(TRAINER)
    if trainer_ps is None or job.spec.trainer is None:
        return
    node = _container(build.pod_spec(trainer_ps), NODE)
    if node is None:
        return
    workers = trainer_ps.count * max(gpus_per_node(_resources_per_node(build)), 1)
    _upsert_env(
        node,
        [
            _env("DMLC_TRACKER_URI", master_address(job)),
            _env("DMLC_TRACKER_PORT", str(TRAINER_PORT)),
            _index_env("DMLC_TASK_ID"),
            _env("DMLC_NUM_WORKER", str(workers)),
        ],
    )
    node["ports"] = upsert(
        node.get("ports") or [], [{"containerPort": TRAINER_PORT}], by_port_or_name
    )


# ------------------------------------------------------------------ step 4: gang policy


def _pod_group(build: _Build) -> PodGroupPlan | None:
    policy = build.runtime.spec.pod_group_policy
    if policy is None or (policy.coscheduling is None and policy.volcano is None):
        return None
    job = build.job
    members = sum(p.count for p in build.pod_sets)
    totals: dict[str, tuple[Fraction, Any]] = {}
    for pod_set in build.pod_sets:
        for name, (value, sample) in pod_set.requests.items():
            before = totals.get(name)
            amount = value * pod_set.count
            totals[name] = (before[0] + amount, before[1]) if before else (amount, sample)
    resources = {name: format_like(v, s) for name, (v, s) in sorted(totals.items())}
    spec: dict[str, Any] = {"minMember": members, "minResources": resources}
    if policy.coscheduling is not None:
        build.pod_labels[POD_GROUP_LABEL] = job.name
        timeout = policy.coscheduling.schedule_timeout_seconds
        spec["scheduleTimeoutSeconds"] = DEFAULT_SCHEDULE_TIMEOUT if timeout is None else timeout
        return PodGroupPlan("scheduler-plugins", spec)
    else:
        assert policy.volcano is not None
        build.pod_annotations[GROUP_NAME_ANNOTATION] = job.name
        if QUEUE_ANNOTATION in build.annotations:
            spec["queue"] = build.annotations[QUEUE_ANNOTATION]
        for rjob in build.spec["replicatedJobs"]:
            priority = _pod_spec(rjob).get("priorityClassName")
            if priority is not None:  # the last one set wins, as in the controller's loop
                spec["priorityClassName"] = priority
        topology = policy.volcano.network_topology
        if topology is not None:
            spec["networkTopology"] = {
                "mode": topology.mode or "hard",
                "highestTierAllowed": 1
                if topology.highest_tier_allowed is None
                else topology.highest_tier_allowed,
            }
        return PodGroupPlan("volcano", spec)


# ---------------------------------------------------------------- steps 5-6: the JobSet


def _endpoints(build: _Build, pod_set: _PodSet) -> list[str]:
    """``<tj>-<rjob>-<jobIndex>-<podIndex>.<subdomain>`` for every pod of the pod set."""
    network = build.spec.get("network") or {}
    subdomain = network.get("subdomain") or build.job.name
    replicas = build.rjob(pod_set).get("replicas", 1)
    return [
        f"{build.job.name}-{pod_set.name}-{r}-{p}.{subdomain}"
        for r in range(replicas if isinstance(replicas, int) else 1)
        for p in range(pod_set.count)
    ]


def _initializers(build: _Build) -> None:
    initializer = build.job.spec.initializer
    for rjob in build.spec["replicatedJobs"]:
        ancestor = _ancestor(rjob)
        if ancestor not in (DATASET, MODEL):
            continue
        rjob["replicas"] = 1
        source = None
        if initializer is not None:
            source = initializer.dataset if ancestor == DATASET else initializer.model
        container = _container(_pod_spec(rjob), ancestor)
        if source is None or container is None:
            continue
        if source.storage_uri is not None:
            _upsert_env(container, [_env(STORAGE_URI, source.storage_uri)])
        _upsert_env(container, [dict(e) for e in source.env or []])
        if source.secret_ref is not None:
            container["envFrom"] = [
                *(container.get("envFrom") or []),
                {"secretRef": {"name": source.secret_ref.name}},
            ]


def _trainer(build: _Build) -> None:
    trainer = build.job.spec.trainer
    ml = build.ml
    launcher_as_node = bool(ml and ml.mpi and ml.mpi.run_launcher_as_node)
    for rjob in build.spec["replicatedJobs"]:
        ancestor = _ancestor(rjob)
        node = _container(_pod_spec(rjob), NODE)
        if ancestor == TRAINER:
            rjob["replicas"] = 1
            if trainer is not None and node is not None:
                if trainer.image is not None:
                    node["image"] = trainer.image
                command = build.torchtune_command or trainer.command
                if command is not None:
                    node["command"] = list(command)
                if trainer.args is not None:
                    node["args"] = list(trainer.args)
        if (ancestor == TRAINER or (launcher_as_node and rjob.get("name") == NODE)) and (
            trainer is not None and node is not None
        ):
            _upsert_env(node, [dict(e) for e in trainer.env or []])


def _decorate_pods(build: _Build) -> None:
    for rjob in build.spec["replicatedJobs"]:
        pod_template = rjob["template"]["spec"]["template"]
        for key, extra in (("labels", build.pod_labels), ("annotations", build.pod_annotations)):
            if extra:
                meta = pod_template.setdefault("metadata", {})
                meta[key] = {**(meta.get(key) or {}), **extra}


def _target_findings(job: TrainJob, ml: MLPolicy | None) -> list[Finding]:
    findings = []
    if job.managed_by != DEFAULT_MANAGED_BY:
        manager = job.managed_by
        findings.append(MANAGED_BY.at("spec.managedBy", manager, manager=manager))
    if ml is not None and ml.flux is not None:
        findings.append(FLUX_UNSUPPORTED.at("spec.runtimeRef", job.spec.runtime_ref.name))
    deadline = job.spec.active_deadline_seconds
    if deadline is not None:
        findings.append(DEADLINE_CONTROLLER.at("spec.activeDeadlineSeconds", deadline))
    return findings


def _quantities_as_strings(spec: dict[str, Any]) -> None:
    # The controller reads the runtime into Go types and writes the JobSet from them, so
    # every container quantity comes out as Quantity prints it: a string, canonical.
    for rjob in spec.get("replicatedJobs") or []:
        pod_spec = _pod_spec(rjob)
        for key in ("containers", "initContainers"):
            for container in pod_spec.get(key) or []:
                resources = container.get("resources") if isinstance(container, dict) else None
                for part in ("limits", "requests"):
                    values = (resources or {}).get(part)
                    if not isinstance(values, dict):
                        continue
                    for name, raw in values.items():
                        value = quantity_or_none(raw)
                        if value is not None:
                            values[name] = format_like(value, raw)


def too_many_nodes(job: TrainJob, ml: MLPolicy | None) -> list[Finding]:
    """An error when the node count passes the pods-per-job limit: checked before the
    hostfile and the Jobs are built, one line and one pod per node."""
    trainer = job.spec.trainer
    own = trainer is not None and trainer.num_nodes is not None
    nodes = trainer.num_nodes if trainer is not None and trainer.num_nodes is not None else None
    if nodes is None:
        nodes = ml.num_nodes if ml is not None and ml.num_nodes is not None else 1
    if nodes <= limits.POD_COUNT.value():
        return []
    return [
        Finding(
            code="replicas.too_many",
            path="spec.trainer.numNodes" if own else "spec.runtimeRef",
            message=f"the job would run {nodes:,} nodes; {limits.POD_COUNT.exceeded()}",
            value=nodes,
            hint="check numNodes for a typo, or split the job; if it is right, raise the "
            f"limit with {limits.POD_COUNT.env}=N",
        )
    ]


def jobset_plan(job: TrainJob, runtime: Runtime) -> tuple[JobSetPlan | None, list[Finding]]:
    """What the Trainer v2.3.0 controller creates for ``job`` run on ``runtime``: the
    JobSet and, by policy, the MPI Secret and hostfile (MPI policy) and the PodGroup (gang
    policy), which the ``jobset`` target writes; and findings for what that target cannot
    do as the controller would (errors, and then None: nothing should be applied).
    The plan is shared data: read it, never change it."""
    # A render asks for the same job's JobSet several times (its plan for the pod guard,
    # its checks, the expansion); the job and runtime are frozen models, so within a
    # render it is built once for them (and the pod limit in force).
    key = ("trainjob.jobset", Identity(job), Identity(runtime), limits.POD_COUNT.value())
    plan, findings = remembered(key, lambda: _jobset_plan(job, runtime))
    return plan, list(findings)


def _jobset_plan(job: TrainJob, runtime: Runtime) -> tuple[JobSetPlan | None, list[Finding]]:
    ml = runtime.spec.ml_policy
    findings = [*too_many_nodes(job, ml), *_target_findings(job, ml)]
    if any(f.severity is Severity.ERROR for f in findings):
        return None, findings
    spec, labels, annotations = _template(job, runtime)
    build = _Build(job, runtime, ml, spec, [], labels, annotations)
    _pod_sets(build)
    kind = ml.kind if ml is not None else ""
    if kind == "torch":
        _torch(build)
    elif kind == "mpi":
        _mpi(build)
    elif kind == "jax":
        _jax(build)
    else:
        _plain(build)
        if kind == "xgboost":
            _xgboost(build)
    pod_group = _pod_group(build)
    for pod_set in build.pod_sets:
        job_spec = build.rjob(pod_set)["template"]["spec"]
        job_spec["parallelism"] = pod_set.count
        job_spec["completions"] = pod_set.count
    _initializers(build)
    _trainer(build)
    _decorate_pods(build)
    spec["suspend"] = job.suspended
    _quantities_as_strings(spec)
    plan = JobSetPlan(
        name=job.name,
        namespace=job.namespace,
        spec=deep_copy(spec),
        labels=dict(labels),
        annotations=dict(annotations),
        mpi=_mpi_files(build) if kind == "mpi" else None,
        pod_group=pod_group,
        # The fields are the runtime's; the user's TrainJob names it at spec.runtimeRef.
        source_path="spec.runtimeRef",
        source=f"runtime {job.spec.runtime_ref.name!r} spec.template.spec.",
    )
    return plan, [*findings, *build.findings]
