"""The Trainer v2.3.0 webhooks' rules, as findings with the path in the user's document.

The TrainJob validator runs each plugin's ``Validate`` against the runtime the job names
(``pkg/runtime/framework/plugins/{torch,mpi,xgboost,jobset}``, ``pkg/webhooks``); the
TrainingRuntime and ClusterTrainingRuntime validators check the replicated jobs
(``pkg/webhooks/trainingruntime_webhook.go``). Rules the Trainer does not have but whose
breach makes a job that cannot run (``numNodes: 0``, settings the runtime's policy
ignores) are findings too, said as such.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from trainjobs.errors import Finding, Rule, Severity
from trainjobs.frameworks.trainjob.jobset import (
    ANCESTOR_LABEL,
    DATASET,
    MODEL,
    NODE,
    TORCHTUNE_ENTRYPOINT,
    TORCHTUNE_IMMUTABLE,
    TRAINER,
    _lora,
    _qlora,
    _torchtune_model,
    gpus_per_node,
    jobset_plan,
    torchtune_recipe,
)
from trainjobs.frameworks.trainjob.model import Runtime, TrainJob
from trainjobs.k8s.names import dns1035_label_problem, dns1123_subdomain_problem

__all__ = [
    "MPI_RESERVED",
    "TORCH_RESERVED",
    "XGBOOST_RESERVED",
    "runtime_findings",
    "trainjob_findings",
]

TORCH_RESERVED: Final = (
    "PET_NNODES",
    "PET_NPROC_PER_NODE",
    "PET_NODE_RANK",
    "PET_MASTER_ADDR",
    "PET_MASTER_PORT",
)
MPI_RESERVED: Final = (
    "OMPI_MCA_orte_default_hostfile",
    "OMPI_MCA_plm_rsh_args",
    "OMPI_MCA_orte_keep_fqdn_hostnames",
    "OMPI_MCA_orte_set_default_slots",
)
XGBOOST_RESERVED: Final = (
    "DMLC_TRACKER_URI",
    "DMLC_TRACKER_PORT",
    "DMLC_TASK_ID",
    "DMLC_NUM_WORKER",
)
TORCHTUNE_MODELS: Final = ("llama3_2/1B", "llama3_2/3B", "llama3_3/70B", "qwen2_5/1.5B")
VALIDATION_LABEL: Final = "trainer.kubeflow.org/webhook-validation"
SUPPORT_LABEL: Final = "trainer.kubeflow.org/support"
_PATH_CHARS = re.compile(r"^[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$")
_EXPECTED_CONTAINER: Final = {TRAINER: NODE, DATASET: DATASET, MODEL: MODEL}
_OWN_ENV: Final = (DATASET, MODEL, NODE)
"""Containers whose env the Trainer sets itself, so a runtime patch must not."""

# The rules, declared once; each finding below says only where, the value and the facts.
NAME: Final = Rule(
    "trainjob.name",
    "metadata.name must be an RFC 1035 DNS label of at most 63 characters ({problem})",
    hint="use lowercase letters, digits and '-', starting with a letter",
)
RESERVED_ENV: Final = Rule(
    "trainjob.reserved_env",
    "{name} is reserved: the {policy} policy of runtime {runtime!r} sets it (reserved: {names})",
    hint="remove it, or name your variable differently",
)
ENV_INJECTION_TARGET: Final = Rule(
    "trainjob.env_injection_target",
    "the runtime {runtime!r}'s mlPolicy.torch.envInjection.targets[{index}] names container "
    "{name!r} of replicated job {job!r}, which its template does not have",
    hint="fix the runtime: name a replicated job and a container it has",
)
INITIALIZER_RUNTIME: Final = Rule(
    "trainjob.initializer_runtime",
    "the runtime {runtime!r} {problem}, which the Trainer requires of a runtime for a "
    "TrainJob with this initializer",
    hint="use a runtime with a {kind!r} job (container {kind!r} mounting the 'initializer' "
    "volume), or remove the initializer",
)
PATCH_MANAGER: Final = Rule(
    "trainjob.patch_manager",
    "manager must be a domain-prefixed path, such as 'acme.io/foo'",
    hint="name the tool that owns the patch: <your domain>/<tool>",
)
PATCH_JOB: Final = Rule(
    "trainjob.patch_job",
    "the runtime {runtime!r} has no replicated job {name!r}",
    hint="patch one of {known}",
)
PATCH_CONTAINER: Final = Rule(
    "trainjob.patch_container",
    "replicated job {job!r} of the runtime has no container {name!r}",
    hint="patch one of {known}",
)
PATCH_ENV: Final = Rule(
    "trainjob.patch_env",
    "a runtime patch must not set env of the {name!r} container (nor of dataset-initializer, "
    "model-initializer, node)",
    hint="set it in spec.trainer.env or spec.initializer.*.env",
)
TORCHTUNE_MODEL: Final = Rule(
    "trainjob.torchtune_model",
    "a torchtune job (command [tune, run]) needs a runtime of a supported model; "
    "{runtime!r} names {model}",
    hint="use a torchtune-<model>-<size> runtime ({models})",
)
TORCHTUNE_NODES: Final = Rule(
    "trainjob.torchtune_nodes", "must be 1 for the {model} model", hint="set numNodes: 1"
)
TORCHTUNE_QLORA_MODEL: Final = Rule(
    "trainjob.torchtune_qlora",
    "QLoRA is not supported for the {model} model",
    hint="drop model.quantize_base=True from args",
)
TORCHTUNE_QLORA_GPU: Final = Rule(
    "trainjob.torchtune_qlora",
    "QLoRA of the {model} model runs on one GPU: numProcPerNode must be auto or 1 and "
    "resourcesPerNode must ask for exactly 1 GPU",
    hint="set numProcPerNode: 1 and one GPU per node",
)
TORCHTUNE_LORA_NODES: Final = Rule(
    "trainjob.torchtune_lora_nodes",
    "LoRA fine-tuning is not supported for multi-node training in TorchTune",
    hint="set numNodes: 1",
)
TORCHTUNE_IMMUTABLE_ARG: Final = Rule(
    "trainjob.torchtune_immutable",
    "must not set {key!r}: the runtime manages it",
    hint="remove it",
)
NUM_NODES: Final = Rule(
    "trainjob.num_nodes",
    "numNodes must be at least 1: with fewer the trainer Job gets parallelism 0 and no pod "
    "ever runs",
    hint="set numNodes: 1 or more",
)
NUM_PROC_PER_NODE: Final = Rule(
    "trainjob.num_proc_per_node",
    "numProcPerNode must be at least 1",
    hint="set a positive number, or leave it unset",
)
NUM_PROC_IGNORED: Final = Rule(
    "trainjob.num_proc_ignored",
    "the runtime {runtime!r} has {policy}, which ignores numProcPerNode",
    hint="remove it (only torch and MPI runtimes read it)",
    severity=Severity.WARNING,
)
NO_TRAINER_JOB: Final = Rule(
    "trainjob.no_trainer_job",
    "the runtime {runtime!r} has no replicated job labelled "
    + ANCESTOR_LABEL
    + ": trainer, so spec.trainer changes nothing",
    hint="use a runtime with a trainer job, or remove spec.trainer",
    severity=Severity.WARNING,
)
POD_NAME_LENGTH: Final = Rule(
    "trainjob.pod_name_length",
    "JobSet refuses the Trainer's JobSet: its longest pod name ({longest!r} with the 5 random "
    "characters Kubernetes adds) is longer than 63 characters, so the job never starts",
    hint="shorten the name to at most {most} characters",
)
MPI_NODES: Final = Rule(
    "trainjob.mpi_nodes",
    "must be 1 when the MPI runtime runs the launcher as a node but lacks a 'launcher' or a "
    "'node' job",
    hint="set numNodes: 1, or use a runtime with both jobs",
)
MPI_IMPLEMENTATION: Final = Rule(
    "trainjob.mpi_implementation",
    "the runtime {runtime!r} sets mpiImplementation to '': the Trainer v2.3.0 controller "
    "implements only OpenMPI and fails the TrainJob",
    hint="set mpiImplementation: OpenMPI in the runtime (or leave it unset)",
)
RUNTIME_DEPRECATED: Final = Rule(
    "trainjob.runtime_deprecated",
    "the runtime {runtime!r} is deprecated and will be removed in a future release of "
    "Kubeflow Trainer",
    hint="move to a supported runtime",
    severity=Severity.WARNING,
)
RUNTIME_REPLICAS: Final = Rule(
    "trainjob.runtime_replicas",
    "a {ancestor} job always must have replicas 1",
    hint="set replicas: 1 (the node count is mlPolicy.numNodes)",
)
RUNTIME_CONTAINER: Final = Rule(
    "trainjob.runtime_container",
    "must contain the required container for the ancestor {ancestor}: {wanted!r}",
    hint="name the container {wanted!r}",
)
RUNTIME_DEPENDS_ON: Final = Rule(
    "trainjob.runtime_depends_on",
    "replicated job {job!r} cannot depend on {name!r}: JobSet needs it to be an earlier job",
    hint="name one of {known}",
)
RUNTIME_SUCCESS_TARGET: Final = Rule(
    "trainjob.runtime_success_target",
    "no replicated job {name!r}; JobSet refuses the JobSet",
    hint="name one of {known}",
)
RUNTIME_DEPENDS_FIRST: Final = Rule(
    "trainjob.runtime_depends_first",
    "JobSet refuses dependsOn on the first replicated job",
    hint="move the job it depends on before it",
)


def _rjobs(runtime: Runtime) -> list[Mapping[str, Any]]:
    template = runtime.spec.template
    if template is None or template.spec is None:
        return []
    return [r.to_manifest() for r in template.spec.replicated_jobs or []]


def _pod_spec(rjob: Mapping[str, Any]) -> Mapping[str, Any]:
    spec: Mapping[str, Any] = ((rjob.get("template") or {}).get("spec") or {}).get(
        "template", {}
    ).get("spec") or {}
    return spec


def _names(pod_spec: Mapping[str, Any], key: str) -> list[str]:
    return [str(c.get("name")) for c in pod_spec.get(key) or [] if isinstance(c, Mapping)]


def _reserved(job: TrainJob, names: tuple[str, ...], policy: str) -> list[Finding]:
    trainer = job.spec.trainer
    out = []
    for index, env in enumerate((trainer.env if trainer else None) or []):
        if env.get("name") in names:
            out.append(
                RESERVED_ENV.at(
                    f"spec.trainer.env[{index}].name",
                    env.get("name"),
                    name=env.get("name"),
                    policy=policy,
                    runtime=job.spec.runtime_ref.name,
                    names=", ".join(names),
                )
            )
    return out


def _env_injection_rules(job: TrainJob, runtime: Runtime) -> list[Finding]:
    ml = runtime.spec.ml_policy
    injection = ml.torch.env_injection if ml and ml.torch else None
    containers = {
        str(r.get("name")): set(_names(_pod_spec(r), "containers"))
        | set(_names(_pod_spec(r), "initContainers"))
        for r in _rjobs(runtime)
    }
    out = []
    for index, target in enumerate((injection.targets if injection else None) or []):
        for name in target.container_names:
            if name not in containers.get(target.job_name, set()):
                out.append(
                    ENV_INJECTION_TARGET.at(
                        "spec.runtimeRef",
                        target.to_manifest(),
                        runtime=runtime.name,
                        index=index,
                        name=name,
                        job=target.job_name,
                    )
                )
    return out


def _initializer_rules(job: TrainJob, runtime: Runtime) -> list[Finding]:
    out = []
    rjobs = {str(r.get("name")): r for r in _rjobs(runtime)}
    initializer = job.spec.initializer
    for kind, source in (
        (DATASET, initializer.dataset if initializer else None),
        (MODEL, initializer.model if initializer else None),
    ):
        if source is None:
            continue
        path = f"spec.initializer.{'dataset' if kind == DATASET else 'model'}"
        rjob = rjobs.get(kind)
        problem = ""
        if rjob is None:
            problem = f"has no replicated job named {kind!r}"
        else:
            container = next(
                (c for c in _pod_spec(rjob).get("containers") or [] if c.get("name") == kind),
                None,
            )
            if container is None:
                problem = f"has no container {kind!r} in its {kind!r} job"
            elif not any(
                m.get("name") == "initializer" for m in container.get("volumeMounts") or []
            ):
                problem = f"mounts no volume named 'initializer' in container {kind!r}"
        if problem:
            name = job.spec.runtime_ref.name
            out.append(INITIALIZER_RUNTIME.at(path, name, runtime=name, problem=problem, kind=kind))
    return out


def _patch_rules(job: TrainJob, runtime: Runtime) -> list[Finding]:
    out = []
    containers = {
        str(r.get("name")): set(_names(_pod_spec(r), "containers"))
        | set(_names(_pod_spec(r), "initContainers"))
        for r in _rjobs(runtime)
    }
    for p_index, patch in enumerate(job.spec.runtime_patches or []):
        base = f"spec.runtimePatches[{p_index}]"
        host, sep, tail = patch.manager.partition("/")
        if not sep or not tail or dns1123_subdomain_problem(host) or not _PATH_CHARS.match(tail):
            out.append(PATCH_MANAGER.at(f"{base}.manager", patch.manager))
        spec = patch.training_runtime_spec
        js_patch = spec.template.spec if spec and spec.template else None
        for r_index, rpatch in enumerate((js_patch.replicated_jobs if js_patch else None) or []):
            rpath = f"{base}.trainingRuntimeSpec.template.spec.replicatedJobs[{r_index}]"
            known = containers.get(rpatch.name)
            if known is None:
                out.append(
                    PATCH_JOB.at(
                        f"{rpath}.name",
                        rpatch.name,
                        runtime=job.spec.runtime_ref.name,
                        name=rpatch.name,
                        known=", ".join(sorted(containers)) or "none",
                    )
                )
                continue
            pod = (
                rpatch.template.spec.template.spec
                if (rpatch.template and rpatch.template.spec and rpatch.template.spec.template)
                else None
            )
            if pod is None:
                continue
            for key, items in (
                ("initContainers", pod.init_containers),
                ("containers", pod.containers),
            ):
                for c_index, container in enumerate(items or []):
                    cpath = f"{rpath}.template.spec.template.spec.{key}[{c_index}]"
                    if container.name not in known:
                        out.append(
                            PATCH_CONTAINER.at(
                                f"{cpath}.name",
                                container.name,
                                job=rpatch.name,
                                name=container.name,
                                known=", ".join(sorted(known)) or "none",
                            )
                        )
                    elif key == "containers" and container.env and container.name in _OWN_ENV:
                        names = [e.get("name") for e in container.env]
                        out.append(PATCH_ENV.at(f"{cpath}.env", names, name=container.name))
    return out


def _torchtune_rules(job: TrainJob, runtime: Runtime) -> list[Finding]:
    trainer = job.spec.trainer
    assert trainer is not None
    out = []
    model = _torchtune_model(job.spec.runtime_ref.name)
    if model not in TORCHTUNE_MODELS:
        name = job.spec.runtime_ref.name
        out.append(
            TORCHTUNE_MODEL.at(
                "spec.runtimeRef.name",
                name,
                runtime=name,
                model=model or "none",
                models=", ".join(TORCHTUNE_MODELS),
            )
        )
    nodes = trainer.num_nodes if trainer.num_nodes is not None else 1
    if nodes > 1 and model != "llama3_3/70B":
        out.append(TORCHTUNE_NODES.at("spec.trainer.numNodes", nodes, model=model))
    nproc: int | str = (
        trainer.num_proc_per_node if trainer.num_proc_per_node is not None else "auto"
    )
    resources = dict(trainer.resources_per_node or {}) or _runtime_node_resources(runtime)
    _, config = torchtune_recipe(job, nodes, nproc, gpus_per_node(resources))
    args = list(trainer.args or [])
    if "_qlora" in config:
        if model == "qwen2_5/1.5B":
            name = job.spec.runtime_ref.name
            out.append(TORCHTUNE_QLORA_MODEL.at("spec.runtimeRef.name", name, model=model))
        if "_qlora_single_device" not in config and model in ("llama3_2/1B", "llama3_2/3B"):
            resources_path = "spec.trainer.resourcesPerNode"
            out.append(
                TORCHTUNE_QLORA_GPU.at(resources_path, trainer.resources_per_node, model=model)
            )
    if nodes > 1 and (_lora(args) or _qlora(args)):
        out.append(TORCHTUNE_LORA_NODES.at("spec.trainer.numNodes", nodes))
    for index, arg in enumerate(args):
        key = arg.split("=", 1)[0]
        if key in TORCHTUNE_IMMUTABLE:
            out.append(TORCHTUNE_IMMUTABLE_ARG.at(f"spec.trainer.args[{index}]", arg, key=key))
    return out


def _runtime_node_resources(runtime: Runtime) -> dict[str, Any]:
    for rjob in _rjobs(runtime):
        labels = ((rjob.get("template") or {}).get("metadata") or {}).get("labels") or {}
        if rjob.get("name") != NODE and labels.get(ANCESTOR_LABEL) != TRAINER:
            continue
        for container in _pod_spec(rjob).get("containers") or []:
            if container.get("name") == NODE:
                resources: dict[str, Any] = container.get("resources") or {}
                return resources
    return {}


def _trainer_rules(job: TrainJob, runtime: Runtime) -> list[Finding]:
    out = []
    trainer = job.spec.trainer
    ml = runtime.spec.ml_policy
    kind = ml.kind if ml else ""
    if trainer is not None and trainer.num_nodes is not None and trainer.num_nodes < 1:
        out.append(NUM_NODES.at("spec.trainer.numNodes", trainer.num_nodes))
    if trainer is not None and trainer.num_proc_per_node is not None:
        nproc_path, nproc = "spec.trainer.numProcPerNode", trainer.num_proc_per_node
        if nproc < 1:
            out.append(NUM_PROC_PER_NODE.at(nproc_path, nproc))
        elif kind not in ("torch", "mpi", "flux"):
            policy = f"the {kind} policy" if kind else "no ML policy"
            name = job.spec.runtime_ref.name
            out.append(NUM_PROC_IGNORED.at(nproc_path, nproc, runtime=name, policy=policy))
    ancestors = {
        (((r.get("template") or {}).get("metadata") or {}).get("labels") or {}).get(ANCESTOR_LABEL)
        for r in _rjobs(runtime)
    }
    if trainer is not None and TRAINER not in ancestors:
        name = job.spec.runtime_ref.name
        out.append(NO_TRAINER_JOB.at("spec.trainer", name, runtime=name))
    return out


def _pod_name_rules(job: TrainJob, runtime: Runtime) -> list[Finding]:
    """JobSet's webhook refuses a JobSet whose longest pod name (``<js>-<rjob>-<job index>-
    <pod index>-<5 random>``) is not a DNS-1035 label: the Trainer's JobSet for a long
    TrainJob name never gets made, and the job never runs."""
    plan, _ = jobset_plan(job, runtime)
    if plan is None:
        return []
    out = []
    for rjob in plan.spec.get("replicatedJobs") or []:
        replicas = rjob.get("replicas", 1)
        completions = rjob["template"]["spec"].get("completions", 1)
        longest = f"{job.name}-{rjob['name']}-{replicas - 1}-{completions - 1}-abcde"
        if len(longest) > 63:
            spare = 63 - (len(longest) - len(job.name))
            out.append(
                POD_NAME_LENGTH.at("metadata.name", job.name, longest=longest, most=max(spare, 1))
            )
            break
    return out


def trainjob_findings(job: TrainJob, runtime: Runtime) -> list[Finding]:
    """Every rule the Trainer's TrainJob webhook applies to ``job`` on ``runtime``, and the
    trainjobs rules above; paths relative to the TrainJob document."""
    out: list[Finding] = []
    problem = dns1035_label_problem(job.name)
    if problem or len(job.name) > 63:
        out.append(NAME.at("metadata.name", job.name, problem=problem or "too long"))
    ml = runtime.spec.ml_policy
    kind = ml.kind if ml else ""
    trainer = job.spec.trainer
    if kind == "torch":
        out += _env_injection_rules(job, runtime)
        out += _reserved(job, TORCH_RESERVED, "torch")
        if trainer is not None and list(trainer.command or []) == TORCHTUNE_ENTRYPOINT:
            out += _torchtune_rules(job, runtime)
    elif kind == "mpi":
        assert ml is not None and ml.mpi is not None
        names = {str(r.get("name")) for r in _rjobs(runtime)}
        nodes = trainer.num_nodes if trainer and trainer.num_nodes is not None else 1
        launcher_as_node = bool(ml.mpi.run_launcher_as_node)
        if (
            trainer is not None
            and nodes >= 2
            and launcher_as_node
            and ("launcher" not in names or NODE not in names)
        ):
            out.append(MPI_NODES.at("spec.trainer.numNodes", nodes))
        out += _reserved(job, MPI_RESERVED, "MPI")
        if ml.mpi.mpi_implementation == "":
            out.append(MPI_IMPLEMENTATION.at("spec.runtimeRef", runtime.name, runtime=runtime.name))
    elif kind == "xgboost":
        out += _reserved(job, XGBOOST_RESERVED, "XGBoost")
    out += _initializer_rules(job, runtime)
    out += _patch_rules(job, runtime)
    out += _pod_name_rules(job, runtime)
    out += _trainer_rules(job, runtime)
    deprecated = (runtime.metadata.labels or {}).get(SUPPORT_LABEL) == "deprecated"
    if deprecated and runtime.kind == "ClusterTrainingRuntime":  # as upstream: only those
        out.append(
            RUNTIME_DEPRECATED.at("spec.runtimeRef.name", runtime.name, runtime=runtime.name)
        )
    return out


def runtime_findings(runtime: Runtime) -> list[Finding]:
    """The (Cluster)TrainingRuntime webhook's rules and JobSet's creation rules, with paths
    relative to the runtime document. A runtime labelled
    ``trainer.kubeflow.org/webhook-validation: disabled`` skips the webhook's (as upstream)."""
    out: list[Finding] = []
    base = "spec.template.spec.replicatedJobs"
    rjobs = _rjobs(runtime)
    validated = (runtime.metadata.labels or {}).get(VALIDATION_LABEL) != "disabled"
    for index, rjob in enumerate(rjobs):
        labels = ((rjob.get("template") or {}).get("metadata") or {}).get("labels") or {}
        ancestor = labels.get(ANCESTOR_LABEL)
        if not validated or ancestor not in _EXPECTED_CONTAINER:
            continue
        if rjob.get("replicas", 1) != 1:
            replicas = rjob.get("replicas")
            out.append(
                RUNTIME_REPLICAS.at(f"{base}[{index}].replicas", replicas, ancestor=ancestor)
            )
        wanted = _EXPECTED_CONTAINER[ancestor]
        have = _names(_pod_spec(rjob), "containers")
        if wanted not in have:
            path = f"{base}[{index}].template.spec.template.spec.containers"
            out.append(RUNTIME_CONTAINER.at(path, have, ancestor=ancestor, wanted=wanted))
    names = [str(r.get("name")) for r in rjobs]
    for index, rjob in enumerate(rjobs[1:], start=1):  # the first: its own rule below
        for d_index, depends in enumerate(rjob.get("dependsOn") or []):
            if depends.get("name") not in names[:index]:
                out.append(
                    RUNTIME_DEPENDS_ON.at(
                        f"{base}[{index}].dependsOn[{d_index}].name",
                        depends.get("name"),
                        job=rjob.get("name"),
                        name=depends.get("name"),
                        known=", ".join(names[:index]) or "none",
                    )
                )
    spec = runtime.spec.template.spec if runtime.spec.template else None
    success = spec.success_policy if spec else None
    for t_index, target in enumerate((success.target_replicated_jobs if success else None) or []):
        if target not in names:
            out.append(
                RUNTIME_SUCCESS_TARGET.at(
                    f"spec.template.spec.successPolicy.targetReplicatedJobs[{t_index}]",
                    target,
                    name=target,
                    known=", ".join(names) or "none",
                )
            )
    if rjobs and rjobs[0].get("dependsOn"):
        out.append(RUNTIME_DEPENDS_FIRST.at(f"{base}[0].dependsOn", rjobs[0].get("dependsOn")))
    return out
