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

from trainjobs.errors import Finding, Severity
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
    jobset_manifests,
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
                Finding(
                    code="trainjob.reserved_env",
                    path=f"spec.trainer.env[{index}].name",
                    message=f"{env.get('name')} is reserved: the {policy} policy of runtime "
                    f"{job.spec.runtime_ref.name!r} sets it (reserved: {', '.join(names)})",
                    value=env.get("name"),
                    hint="remove it, or name your variable differently",
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
                    Finding(
                        code="trainjob.env_injection_target",
                        path="spec.runtimeRef",
                        message=f"the runtime {runtime.name!r}'s mlPolicy.torch.envInjection."
                        f"targets[{index}] names container {name!r} of replicated job "
                        f"{target.job_name!r}, which its template does not have",
                        value=target.to_manifest(),
                        hint="fix the runtime: name a replicated job and a container it has",
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
            out.append(
                Finding(
                    code="trainjob.initializer_runtime",
                    path=path,
                    message=f"the runtime {job.spec.runtime_ref.name!r} {problem}, which the "
                    "Trainer requires of a runtime for a TrainJob with this initializer",
                    value=job.spec.runtime_ref.name,
                    hint=f"use a runtime with a {kind!r} job (container {kind!r} mounting the "
                    "'initializer' volume), or remove the initializer",
                )
            )
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
            out.append(
                Finding(
                    code="trainjob.patch_manager",
                    path=f"{base}.manager",
                    message="manager must be a domain-prefixed path, such as 'acme.io/foo'",
                    value=patch.manager,
                    hint="name the tool that owns the patch: <your domain>/<tool>",
                )
            )
        spec = patch.training_runtime_spec
        js_patch = spec.template.spec if spec and spec.template else None
        for r_index, rpatch in enumerate((js_patch.replicated_jobs if js_patch else None) or []):
            rpath = f"{base}.trainingRuntimeSpec.template.spec.replicatedJobs[{r_index}]"
            known = containers.get(rpatch.name)
            if known is None:
                out.append(
                    Finding(
                        code="trainjob.patch_job",
                        path=f"{rpath}.name",
                        message=f"the runtime {job.spec.runtime_ref.name!r} has no replicated job "
                        f"{rpatch.name!r}",
                        value=rpatch.name,
                        hint=f"patch one of {', '.join(sorted(containers)) or 'none'}",
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
                            Finding(
                                code="trainjob.patch_container",
                                path=f"{cpath}.name",
                                message=f"replicated job {rpatch.name!r} of the runtime has no "
                                f"container {container.name!r}",
                                value=container.name,
                                hint=f"patch one of {', '.join(sorted(known)) or 'none'}",
                            )
                        )
                    elif (
                        key == "containers"
                        and container.env
                        and container.name
                        in (
                            DATASET,
                            MODEL,
                            NODE,
                        )
                    ):
                        out.append(
                            Finding(
                                code="trainjob.patch_env",
                                path=f"{cpath}.env",
                                message="a runtime patch must not set env of the "
                                f"{container.name!r} container (nor of dataset-initializer, "
                                "model-initializer, node)",
                                value=[e.get("name") for e in container.env],
                                hint="set it in spec.trainer.env or spec.initializer.*.env",
                            )
                        )
    return out


def _torchtune_rules(job: TrainJob, runtime: Runtime) -> list[Finding]:
    trainer = job.spec.trainer
    assert trainer is not None
    out = []
    model = _torchtune_model(job.spec.runtime_ref.name)
    if model not in TORCHTUNE_MODELS:
        out.append(
            Finding(
                code="trainjob.torchtune_model",
                path="spec.runtimeRef.name",
                message=f"a torchtune job (command [tune, run]) needs a runtime of a supported "
                f"model; {job.spec.runtime_ref.name!r} names {model or 'none'}",
                value=job.spec.runtime_ref.name,
                hint=f"use a torchtune-<model>-<size> runtime ({', '.join(TORCHTUNE_MODELS)})",
            )
        )
    nodes = trainer.num_nodes if trainer.num_nodes is not None else 1
    if nodes > 1 and model != "llama3_3/70B":
        out.append(
            Finding(
                code="trainjob.torchtune_nodes",
                path="spec.trainer.numNodes",
                message=f"must be 1 for the {model} model",
                value=nodes,
                hint="set numNodes: 1",
            )
        )
    nproc: int | str = (
        trainer.num_proc_per_node if trainer.num_proc_per_node is not None else "auto"
    )
    resources = dict(trainer.resources_per_node or {}) or _runtime_node_resources(runtime)
    _, config = torchtune_recipe(job, nodes, nproc, gpus_per_node(resources))
    args = list(trainer.args or [])
    if "_qlora" in config:
        if model == "qwen2_5/1.5B":
            out.append(
                Finding(
                    code="trainjob.torchtune_qlora",
                    path="spec.runtimeRef.name",
                    message=f"QLoRA is not supported for the {model} model",
                    value=job.spec.runtime_ref.name,
                    hint="drop model.quantize_base=True from args",
                )
            )
        if "_qlora_single_device" not in config and model in ("llama3_2/1B", "llama3_2/3B"):
            out.append(
                Finding(
                    code="trainjob.torchtune_qlora",
                    path="spec.trainer.resourcesPerNode",
                    message=f"QLoRA of the {model} model runs on one GPU: numProcPerNode must be "
                    "auto or 1 and resourcesPerNode must ask for exactly 1 GPU",
                    value=trainer.resources_per_node,
                    hint="set numProcPerNode: 1 and one GPU per node",
                )
            )
    if nodes > 1 and (_lora(args) or _qlora(args)):
        out.append(
            Finding(
                code="trainjob.torchtune_lora_nodes",
                path="spec.trainer.numNodes",
                message="LoRA fine-tuning is not supported for multi-node training in TorchTune",
                value=nodes,
                hint="set numNodes: 1",
            )
        )
    for index, arg in enumerate(args):
        key = arg.split("=", 1)[0]
        if key in TORCHTUNE_IMMUTABLE:
            out.append(
                Finding(
                    code="trainjob.torchtune_immutable",
                    path=f"spec.trainer.args[{index}]",
                    message=f"must not set {key!r}: the runtime manages it",
                    value=arg,
                    hint="remove it",
                )
            )
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
        out.append(
            Finding(
                code="trainjob.num_nodes",
                path="spec.trainer.numNodes",
                message="numNodes must be at least 1: with fewer the trainer Job gets "
                "parallelism 0 and no pod ever runs",
                value=trainer.num_nodes,
                hint="set numNodes: 1 or more",
            )
        )
    if trainer is not None and trainer.num_proc_per_node is not None:
        if trainer.num_proc_per_node < 1:
            out.append(
                Finding(
                    code="trainjob.num_proc_per_node",
                    path="spec.trainer.numProcPerNode",
                    message="numProcPerNode must be at least 1",
                    value=trainer.num_proc_per_node,
                    hint="set a positive number, or leave it unset",
                )
            )
        elif kind not in ("torch", "mpi", "flux"):
            out.append(
                Finding(
                    code="trainjob.num_proc_ignored",
                    path="spec.trainer.numProcPerNode",
                    message=f"the runtime {job.spec.runtime_ref.name!r} has "
                    f"{'the ' + kind + ' policy' if kind else 'no ML policy'}, which ignores "
                    "numProcPerNode",
                    value=trainer.num_proc_per_node,
                    hint="remove it (only torch and MPI runtimes read it)",
                    severity=Severity.WARNING,
                )
            )
    ancestors = {
        (((r.get("template") or {}).get("metadata") or {}).get("labels") or {}).get(ANCESTOR_LABEL)
        for r in _rjobs(runtime)
    }
    if trainer is not None and TRAINER not in ancestors:
        out.append(
            Finding(
                code="trainjob.no_trainer_job",
                path="spec.trainer",
                message=f"the runtime {job.spec.runtime_ref.name!r} has no replicated job "
                f"labelled {ANCESTOR_LABEL}: trainer, so spec.trainer changes nothing",
                value=job.spec.runtime_ref.name,
                hint="use a runtime with a trainer job, or remove spec.trainer",
                severity=Severity.WARNING,
            )
        )
    return out


def _pod_name_rules(job: TrainJob, runtime: Runtime) -> list[Finding]:
    """JobSet's webhook refuses a JobSet whose longest pod name (``<js>-<rjob>-<job index>-
    <pod index>-<5 random>``) is not a DNS-1035 label: the Trainer's JobSet for a long
    TrainJob name never gets made, and the job never runs."""
    objects, _ = jobset_manifests(job, runtime)
    if not objects or objects[-1].get("kind") != "JobSet":
        return []
    out = []
    for rjob in objects[-1]["spec"].get("replicatedJobs") or []:
        replicas = rjob.get("replicas", 1)
        completions = rjob["template"]["spec"].get("completions", 1)
        longest = f"{job.name}-{rjob['name']}-{replicas - 1}-{completions - 1}-abcde"
        if len(longest) > 63:
            spare = 63 - (len(longest) - len(job.name))
            out.append(
                Finding(
                    code="trainjob.pod_name_length",
                    path="metadata.name",
                    message=f"JobSet refuses the Trainer's JobSet: its longest pod name "
                    f"({longest!r} with the 5 random characters Kubernetes adds) is longer "
                    "than 63 characters, so the job never starts",
                    value=job.name,
                    hint=f"shorten the name to at most {max(spare, 1)} characters",
                )
            )
            break
    return out


def trainjob_findings(job: TrainJob, runtime: Runtime) -> list[Finding]:
    """Every rule the Trainer's TrainJob webhook applies to ``job`` on ``runtime``, and the
    trainjobs rules above; paths relative to the TrainJob document."""
    out: list[Finding] = []
    problem = dns1035_label_problem(job.name)
    if problem or len(job.name) > 63:
        out.append(
            Finding(
                code="trainjob.name",
                path="metadata.name",
                message="metadata.name must be an RFC 1035 DNS label of at most 63 characters "
                f"({problem or 'too long'})",
                value=job.name,
                hint="use lowercase letters, digits and '-', starting with a letter",
            )
        )
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
            out.append(
                Finding(
                    code="trainjob.mpi_nodes",
                    path="spec.trainer.numNodes",
                    message="must be 1 when the MPI runtime runs the launcher as a node but "
                    "lacks a 'launcher' or a 'node' job",
                    value=nodes,
                    hint="set numNodes: 1, or use a runtime with both jobs",
                )
            )
        out += _reserved(job, MPI_RESERVED, "MPI")
        if ml.mpi.mpi_implementation == "":
            out.append(
                Finding(
                    code="trainjob.mpi_implementation",
                    path="spec.runtimeRef",
                    message=f"the runtime {runtime.name!r} sets mpiImplementation to '': the "
                    "Trainer v2.3.0 controller implements only OpenMPI and fails the TrainJob",
                    value=runtime.name,
                    hint="set mpiImplementation: OpenMPI in the runtime (or leave it unset)",
                )
            )
    elif kind == "xgboost":
        out += _reserved(job, XGBOOST_RESERVED, "XGBoost")
    out += _initializer_rules(job, runtime)
    out += _patch_rules(job, runtime)
    out += _pod_name_rules(job, runtime)
    out += _trainer_rules(job, runtime)
    deprecated = (runtime.metadata.labels or {}).get(SUPPORT_LABEL) == "deprecated"
    if deprecated and runtime.kind == "ClusterTrainingRuntime":  # as upstream: only those
        out.append(
            Finding(
                code="trainjob.runtime_deprecated",
                path="spec.runtimeRef.name",
                message=f"the runtime {runtime.name!r} is deprecated and will be removed in a "
                "future release of Kubeflow Trainer",
                value=runtime.name,
                hint="move to a supported runtime",
                severity=Severity.WARNING,
            )
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
            out.append(
                Finding(
                    code="trainjob.runtime_replicas",
                    path=f"{base}[{index}].replicas",
                    message=f"a {ancestor} job always must have replicas 1",
                    value=rjob.get("replicas"),
                    hint="set replicas: 1 (the node count is mlPolicy.numNodes)",
                )
            )
        wanted = _EXPECTED_CONTAINER[ancestor]
        if wanted not in _names(_pod_spec(rjob), "containers"):
            out.append(
                Finding(
                    code="trainjob.runtime_container",
                    path=f"{base}[{index}].template.spec.template.spec.containers",
                    message=f"must contain the required container for the ancestor {ancestor}: "
                    f"{wanted!r}",
                    value=_names(_pod_spec(rjob), "containers"),
                    hint=f"name the container {wanted!r}",
                )
            )
    names = [str(r.get("name")) for r in rjobs]
    for index, rjob in enumerate(rjobs[1:], start=1):  # the first: its own rule below
        for d_index, depends in enumerate(rjob.get("dependsOn") or []):
            if depends.get("name") not in names[:index]:
                out.append(
                    Finding(
                        code="trainjob.runtime_depends_on",
                        path=f"{base}[{index}].dependsOn[{d_index}].name",
                        message=f"replicated job {rjob.get('name')!r} cannot depend on "
                        f"{depends.get('name')!r}: JobSet needs it to be an earlier job",
                        value=depends.get("name"),
                        hint=f"name one of {', '.join(names[:index]) or 'none'}",
                    )
                )
    spec = runtime.spec.template.spec if runtime.spec.template else None
    success = spec.success_policy if spec else None
    for t_index, target in enumerate((success.target_replicated_jobs if success else None) or []):
        if target not in names:
            out.append(
                Finding(
                    code="trainjob.runtime_success_target",
                    path=f"spec.template.spec.successPolicy.targetReplicatedJobs[{t_index}]",
                    message=f"no replicated job {target!r}; JobSet refuses the JobSet",
                    value=target,
                    hint=f"name one of {', '.join(names) or 'none'}",
                )
            )
    if rjobs and rjobs[0].get("dependsOn"):
        out.append(
            Finding(
                code="trainjob.runtime_depends_first",
                path=f"{base}[0].dependsOn",
                message="JobSet refuses dependsOn on the first replicated job",
                value=rjobs[0].get("dependsOn"),
                hint="move the job it depends on before it",
            )
        )
    return out
