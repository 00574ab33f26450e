"""One v1 job → a TrainJob (and the TrainingRuntime it needs), with every field it
cannot carry listed.

The job is parsed and defaulted by its framework (from the registry), so the nodes,
templates and policies read are the ones its operator would use. The TrainJob names
the runtime Trainer v2.3 ships for the framework (``torch-distributed`` …) when the
node template holds nothing but what a TrainJob's ``spec.trainer`` sets itself (one
container's image, command, args, env and resources); otherwise a TrainingRuntime
named after the job, in its namespace, holds the template whole (volumes, placement,
service account, init containers …), written as the ``trainer`` target writes its
runtime. What Trainer v2.3 has no field for is reported by path, value and reason;
nothing is dropped silently: a key convert does not know is reported too.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from trainjobs.convert.kinds import CONVERTIBLE, REFUSED, TRAINJOB, Convertible
from trainjobs.convert.rules import NOT_A_JOB, NOT_CARRIED, REFUSED_KIND, UNKNOWN_FIELD
from trainjobs.errors import Finding, Severity, SpecError, format_path
from trainjobs.frameworks.registry import REGISTRY
from trainjobs.k8s.data import Manifest, deep_copy
from trainjobs.plan.trainer import (
    API_GROUP,
    API_VERSION,
    ReplicatedJob,
    TrainerPlan,
    as_node,
)
from trainjobs.spec.load import parse_job
from trainjobs.targets.trainer import trainer_manifests

__all__ = ["Conversion", "convert_job"]

OPTIONS_KEY = "trainjobs"
TRAINER_KINDS = {
    TRAINJOB,
    (API_VERSION, "TrainingRuntime"),
    (API_VERSION, "ClusterTrainingRuntime"),
}

# What a TrainJob's spec.trainer sets on the node container itself: with only these
# (and the name) the shipped runtime fits.
_TRAINER_FIELDS = {"name", "image", "command", "args", "env", "resources"}
_MISSING = object()
_SHIPPED_RESTART = "OnFailure"
"""The restart policy of the shipped runtimes' pods (JobSet's default for a template
that sets none)."""


@dataclass(frozen=True)
class Conversion:
    """What convert made of one document.

    Attributes:
        objects: the documents that replace it, in order (TrainingRuntime first); the
            document itself when there is nothing to convert (a TrainJob already).
        findings: fields not carried (warnings) and refusals (errors), paths in the
            user's file.
        converted: whether the document was a v1 job that became a TrainJob.
    """

    objects: list[Manifest]
    findings: list[Finding] = field(default_factory=list)
    converted: bool = False


def _leaves(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[str, Any]]:
    if isinstance(value, Mapping) and value:
        for key, item in value.items():
            yield from _leaves(item, (*path, str(key)))
    elif isinstance(value, list) and value:
        for index, item in enumerate(value):
            yield from _leaves(item, (*path, index))
    else:
        yield format_path(path), value


def _not_carried(path: str, value: Any, why: str, fix: str) -> Finding:
    return NOT_CARRIED.at(path, value, why=why, fix=fix)


@dataclass
class _Job:
    """The job being converted: its defaulted manifest and what is reported."""

    doc: Mapping[str, Any]
    spec: Mapping[str, Any]
    replica_key: str
    rule: Convertible
    container: str
    port_name: str
    findings: list[Finding] = field(default_factory=list)

    def replicas(self, role: str) -> Mapping[str, Any]:
        return (self.spec.get(self.replica_key) or {}).get(role) or {}

    def count(self, role: str) -> int:
        replica = self.replicas(role)
        if not replica:
            return 0
        value = replica.get("replicas")
        return 1 if value is None else int(value)

    def drop(self, path: str, value: Any, why: str, fix: str) -> None:
        self.findings.append(_not_carried(path, value, why, fix))


def convert_job(doc: Mapping[str, Any], path: str = "", source: str = "") -> Conversion:
    """Convert one document (a job as the user wrote it, ``trainjobs:`` options beside).

    Raises nothing for bad input: a job its framework refuses, a refused kind or a
    document that is no job come back as error findings with no objects.
    """
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    key = (str(api_version), str(kind))
    where = f"{path}.kind" if path else "kind"
    if key in TRAINER_KINDS:
        return Conversion([dict(doc)])
    rule = CONVERTIBLE.get(key)
    if rule is None:
        if REGISTRY.of_document(doc) is None:
            # No job (a platform resource, a Namespace …): kept as it is.
            return Conversion([dict(doc)])
        refused = REFUSED.get(str(kind))
        if refused is not None:
            finding = REFUSED_KIND.at(where, kind, kind=kind, why=refused.why, fix=refused.fix)
        else:
            finding = NOT_A_JOB.at(where, f"{api_version} {kind}", what=f"{api_version} {kind}")
        return Conversion([], [finding.located(source)])
    try:
        entries, errors = parse_job(dict(doc), path=path or "jobs[0]", source=source)
    except SpecError as exc:
        return Conversion([], list(exc.findings))
    errors = [f for f in errors if f.severity is Severity.ERROR]
    if errors or len(entries) != 1:
        return Conversion([], errors)
    entry = entries[0]
    framework = entry.framework
    job = framework.default(entry.job)
    invalid = [f for f in framework.validate(job) if f.severity is Severity.ERROR]
    if invalid:
        return Conversion([], [f.located(source, path) for f in invalid])
    manifest = framework.operator_manifest(job)
    state = _Job(
        doc=doc,
        spec=manifest.get("spec") or {},
        replica_key=getattr(framework, "replica_alias", None) or "mpiReplicaSpecs",
        rule=rule,
        container=str(getattr(framework, "default_container", None) or ""),
        port_name=str(getattr(framework, "default_port_name", None) or ""),
    )
    trainer = _trainer_plan(state)
    objects: list[Manifest] = []
    if trainer is not None:
        gang = entry.options.gang
        trainer = _with_v1_env(state, framework, job, trainer)
        objects = trainer_manifests(framework.plan(job), trainer, gang=gang)
        objects = _place_runtime(state, objects, trainer, own=gang is not None)
        options = doc.get(OPTIONS_KEY)
        if isinstance(options, Mapping):
            # The target named the v1 job's expansion; the gang is now the runtime's
            # podGroupPolicy (a TrainJob's own gang option is refused).
            kept = {k: v for k, v in options.items() if k not in ("target", "gang")}
            if kept:
                objects[-1] = {**objects[-1], OPTIONS_KEY: deep_copy(kept)}
    findings = [f.located(source, path) for f in state.findings]
    return Conversion(objects if trainer is not None else [], findings, trainer is not None)


# --- the plan ------------------------------------------------------------------------


def _container_of(template: Mapping[str, Any], name: str) -> str:
    """The node container: the framework's (``pytorch``) or, as the operators do when
    none has that name (MPI: the first), the first one."""
    names = [str(c.get("name")) for c in (template.get("spec") or {}).get("containers") or []]
    return name if name in names else (names[0] if names else name)


def _template_of(state: _Job, role: str) -> dict[str, Any]:
    template = deep_copy(state.replicas(role).get("template") or {})
    return as_node(template, _container_of(template, state.container), state.port_name)


def _restart(state: _Job, role: str, template: dict[str, Any]) -> None:
    base = f"spec.{state.replica_key}.{role}.restartPolicy"
    policy = state.replicas(role).get("restartPolicy")
    spec = template.setdefault("spec", {})
    if policy == "ExitCode":
        state.drop(
            base,
            policy,
            "a Job's pods have no ExitCode policy (retry on a retryable exit code only)",
            "pods now restart as Never: the Job makes a new pod for each failure up to "
            "its backoffLimit (spec.runPolicy.backoffLimit)",
        )
        spec["restartPolicy"] = "Never"
    elif policy == "Always":
        state.drop(
            base,
            policy,
            "a Job's pods cannot restart Always",
            "pods now restart OnFailure",
        )
        spec["restartPolicy"] = "OnFailure"
    elif policy:
        spec["restartPolicy"] = policy


def _compare_roles(state: _Job, kept: str, other: str, node: dict[str, Any]) -> None:
    """Fields of ``other``'s template that differ from the node template (``kept``'s):
    a TrainJob's nodes share one template."""
    theirs = _template_of(state, other)
    _restart(state, other, theirs)
    mine = dict(_leaves(node))
    base = f"spec.{state.replica_key}.{other}.template"
    restart = f"spec.{state.replica_key}.{other}.restartPolicy"
    for leaf, value in _leaves(theirs):
        if mine.get(leaf, _MISSING) != value:
            at = restart if leaf == "spec.restartPolicy" else f"{base}.{leaf}"
            state.drop(
                at,
                value,
                f"a TrainJob's nodes share one pod template, the {kept}'s, and this "
                "differs from it",
                f"make the {other}'s template equal the {kept}'s",
            )


def _trainer_plan(state: _Job) -> TrainerPlan | None:
    rule = state.rule
    _check_keys(state)
    _run_policy(state)
    if rule.policy == "mpi":
        return _mpi_plan(state)
    roles = [r for r in rule.node_roles if state.count(r)]
    if not roles:
        return None
    kept = "Worker" if "Worker" in roles else roles[0]
    node = _template_of(state, kept)
    _restart(state, kept, node)
    for other in roles:
        if other != kept:
            _compare_roles(state, kept, other, node)
    nodes = sum(state.count(r) for r in roles)
    nproc = _nproc(state) if rule.policy == "torch" else None
    if rule.policy == "torch":
        _elastic(state)
    return TrainerPlan(
        framework=rule.policy,
        ml_policy={"numNodes": nodes, rule.policy: {}},
        jobs=(ReplicatedJob("node", node, trainer=True),),
        num_nodes=nodes,
        num_proc_per_node=nproc,
    )


def _nproc(state: _Job) -> int | None:
    value = state.doc.get("spec", {}).get("nprocPerNode")
    if value is None or value == "auto":
        return None  # Trainer's torch runtime defaults to auto
    text = str(value)
    if text.isdigit():
        return int(text)
    state.drop(
        "spec.nprocPerNode",
        value,
        f"Trainer v2.3 takes a number of processes per node (or auto), not {text!r}",
        "set spec.trainer.numProcPerNode of the TrainJob to the node's GPU or CPU count",
    )
    return None


def _elastic(state: _Job) -> None:
    elastic = state.doc.get("spec", {}).get("elasticPolicy")
    if not isinstance(elastic, Mapping):
        return
    why = {
        "minReplicas": "a TrainJob has a fixed node count (trainer.numNodes); Trainer v2.3 "
        "cannot grow or shrink a running job",
        "maxReplicas": "a TrainJob has a fixed node count (trainer.numNodes); Trainer v2.3 "
        "cannot grow or shrink a running job",
        "rdzvBackend": "Trainer v2.3 rendezvouses on a static master (PET_MASTER_ADDR), "
        "no c10d/etcd rendezvous backend",
        "rdzvHost": "Trainer v2.3 sets the rendezvous address itself",
        "rdzvPort": "Trainer v2.3 sets the rendezvous port itself (29500)",
        "rdzvId": "Trainer v2.3 sets no rendezvous id",
        "rdzvConf": "Trainer v2.3 sets no rendezvous configuration",
        "standalone": "Trainer v2.3 sets no standalone rendezvous",
        "nProcPerNode": "deprecated in v1; use nprocPerNode",
        "maxRestarts": "Trainer v2.3 has no torchrun --max-restarts; a failed node is "
        "retried by its Job's backoffLimit",
        "metrics": "Trainer v2.3 makes no HorizontalPodAutoscaler",
    }
    for leaf, value in _leaves(elastic, ("spec", "elasticPolicy")):
        name = leaf.split(".")[2].split("[")[0] if leaf.count(".") >= 2 else leaf
        state.drop(
            leaf,
            value,
            why.get(name, "Trainer v2.3 has no elastic training"),
            "run a fixed number of nodes (the job's replicas), or keep the job on the "
            "Training Operator for elastic training",
        )


MPI_ROLE_ENV = "K_MPI_JOB_ROLE"
"""The MPI Operator gives every container this role (``launcher``/``worker``); the
entrypoint of its base images reads it (the launcher waits until the workers' names
resolve). Trainer v2.3 sets no such variable, so the conversion writes it."""


def _role_env(template: dict[str, Any], role: str) -> None:
    """``K_MPI_JOB_ROLE=role`` on the first container of ``template`` (the one the MPI
    Operator gives it to), unless it sets the variable itself."""
    containers = (template.get("spec") or {}).get("containers") or []
    if containers:
        env = containers[0].setdefault("env", [])
        if not any(e.get("name") == MPI_ROLE_ENV for e in env):
            env.append({"name": MPI_ROLE_ENV, "value": role})


def _mpi_plan(state: _Job) -> TrainerPlan | None:
    spec = state.doc.get("spec") or {}
    defaulted = state.spec
    implementation = defaulted.get("mpiImplementation", "OpenMPI")
    if implementation != "OpenMPI":
        state.findings.append(
            REFUSED_KIND.at(
                "spec.mpiImplementation",
                implementation,
                kind="MPIJob",
                why="Trainer v2.3's MPI runtime implements OpenMPI only",
                fix="use an OpenMPI image and mpiImplementation: OpenMPI, or keep the "
                "job on the MPI Operator",
            )
        )
        return None
    launcher = _template_of(state, "Launcher")
    _restart(state, "Launcher", launcher)
    _role_env(launcher, "launcher")
    workers = state.count("Worker")
    jobs: list[ReplicatedJob] = []
    waits = defaulted.get("launcherCreationPolicy") == "WaitForWorkersReady"
    launcher_job = ReplicatedJob(
        "launcher", launcher, trainer=True, depends_on=("node",) if waits else ()
    )
    jobs.append(launcher_job)
    if workers:
        worker = _template_of(state, "Worker")
        _restart(state, "Worker", worker)
        _role_env(worker, "worker")
        main = (worker.get("spec") or {}).get("containers", [{}])[0]
        if not main.get("command") and not main.get("args"):
            # The launcher reaches the workers over SSH (v1's kubectl exec is gone).
            main["command"] = ["/usr/sbin/sshd", "-De"]
        node = ReplicatedJob("node", worker)
        jobs = [node, launcher_job] if waits else [launcher_job, node]
    as_worker = bool(defaulted.get("runLauncherAsWorker"))
    nodes = max(workers + (1 if as_worker else 0), 1)
    slots = defaulted.get("slotsPerWorker", spec.get("slotsPerWorker", 1)) or 1
    policy: dict[str, Any] = {
        "numProcPerNode": int(slots),
        "mpiImplementation": "OpenMPI",
        "sshAuthMountPath": defaulted.get("sshAuthMountPath", "/root/.ssh"),
        "runLauncherAsNode": as_worker,
    }
    return TrainerPlan(
        framework="mpi",
        # 1, as in upstream's MPI runtimes: Trainer v2.3 gives the replicated job labelled
        # as the trainer ancestor (the launcher) the runtime's numNodes pods, and only
        # the node job the TrainJob's trainer.numNodes; with the node count here the
        # launcher Job ran 4 launchers (tests/cluster/test_convert_expansion.py).
        ml_policy={"numNodes": 1, "mpi": policy},
        jobs=tuple(jobs),
        num_nodes=nodes,
    )


# --- what the training code read ---------------------------------------------------

COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
"""The annotation of an Indexed Job's pod holding its index: a node's rank in Trainer."""
TRAINER_PORT_ENV_PREFIX = "PET_"
"""torchrun's own settings: Trainer writes them (from numNodes, numProcPerNode and its
master), and v1's elastic ones are reported with elasticPolicy."""


def _with_v1_env(state: _Job, framework: Any, job: Any, trainer: TrainerPlan) -> TrainerPlan:
    """The plan with the rendezvous env the v1 operator gave each node that Trainer does
    not (``MASTER_ADDR``, ``WORLD_SIZE``, ``RANK``, JAX's ``COORDINATOR_ADDRESS`` …), so
    the training code reads what it read: a value every node shared, its v1 pod names
    replaced by the nodes' names (``<job>-node-0-<rank>.<job>``, JobSet's headless
    Service); a value that was the node's rank, the Job's completion index. Any other
    per-node value is reported, not guessed."""
    if state.rule.policy == "mpi" or not hasattr(framework, "cluster_envs"):
        return trainer
    roles = [r for r in state.rule.node_roles if state.count(r)]
    pods = [(role, i) for role in roles for i in range(state.count(role))]
    if not pods:
        return trainer
    envs = framework.cluster_envs(job)
    name = str(state.doc["metadata"]["name"])
    hosts = {
        framework.pod_name(job, role, i): f"{name}-node-0-{rank}.{name}"
        for rank, (role, i) in enumerate(pods)
    }
    pattern = re.compile(
        "|".join(f"(?<![\\w.-]){re.escape(h)}(?![\\w-])" for h in sorted(hosts, key=len)[::-1])
    )
    per_pod: dict[str, list[str]] = {}
    for role, i in pods:
        for entry in envs(role, i):
            if "value" in entry and not entry["name"].startswith(TRAINER_PORT_ENV_PREFIX):
                per_pod.setdefault(entry["name"], []).append(str(entry["value"]))
    node = trainer.jobs[0].template
    main = node["spec"]["containers"][0]
    own = {e.get("name") for e in main.get("env") or []}
    added: list[dict[str, Any]] = []
    for env_name, values in per_pod.items():
        if env_name in own or len(values) != len(pods):
            continue
        if len(set(values)) == 1:
            value = pattern.sub(lambda m: hosts[m.group(0)], values[0])
            added.append({"name": env_name, "value": value})
        elif values == [str(rank) for rank in range(len(pods))]:
            ref = {"fieldPath": f"metadata.annotations['{COMPLETION_INDEX}']"}
            added.append({"name": env_name, "valueFrom": {"fieldRef": ref}})
        else:
            state.drop(
                f"spec.{state.replica_key}",
                f"{env_name}={values}",
                f"the v1 operator set {env_name} per pod, and no value of a Trainer node "
                "matches it",
                f"compute {env_name} in the training code",
            )
    if not added:
        return trainer
    main["env"] = [*(main.get("env") or []), *added]
    return trainer


# --- fields ------------------------------------------------------------------------

_SPEC_KEYS = {
    "torch": {"runPolicy", "elasticPolicy", "nprocPerNode"},
    "jax": {"runPolicy"},
    "xgboost": {"runPolicy"},
    "mpi": {
        "runPolicy",
        "slotsPerWorker",
        "sshAuthMountPath",
        "mpiImplementation",
        "launcherCreationPolicy",
        "runLauncherAsWorker",
        "mainContainer",
    },
}
_REPLICA_KEYS = {"replicas", "restartPolicy", "template"}
_META_KEYS = {"name", "namespace", "labels", "annotations"}
# What the API server writes (an object exported with kubectl get -o yaml): no intent
# of the user's, and dropped by every trainjobs command alike.
_SERVER_META = {
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "managedFields",
    "selfLink",
}
_TOP_KEYS = {"apiVersion", "kind", "metadata", "spec", "status", OPTIONS_KEY}


def _check_keys(state: _Job) -> None:
    """Every key convert has no rule for, reported (never dropped silently)."""
    doc = state.doc
    for key, value in (doc.get("metadata") or {}).items():
        if key not in _META_KEYS | _SERVER_META:
            state.findings.append(UNKNOWN_FIELD.at(f"metadata.{key}", value))
    for key, value in doc.items():
        if key not in _TOP_KEYS:
            state.findings.append(UNKNOWN_FIELD.at(str(key), value))
    known = _SPEC_KEYS[state.rule.policy] | {state.replica_key}
    spec = doc.get("spec") or {}
    for key, value in spec.items():
        if key not in known:
            state.findings.append(UNKNOWN_FIELD.at(f"spec.{key}", value))
    roles = set(state.rule.node_roles) | ({state.rule.launcher} - {""})
    for role, replica in (spec.get(state.replica_key) or {}).items():
        base = f"spec.{state.replica_key}.{role}"
        if role not in roles:
            state.drop(
                base,
                "…",
                f"a {state.rule.policy} runtime has no {role} replicas",
                f"remove {role} or keep the job on its operator",
            )
            continue
        for key, value in (replica or {}).items():
            if key not in _REPLICA_KEYS:
                state.findings.append(UNKNOWN_FIELD.at(f"{base}.{key}", value))
    if state.rule.policy == "mpi" and spec.get("mainContainer"):
        state.container = str(spec["mainContainer"])


_RUN_POLICY = {
    "cleanPodPolicy": (
        "Trainer v2.3 keeps or deletes a finished job's pods as its JobSet does, with no "
        "per-job choice",
        "delete the TrainJob to delete its pods",
    ),
    "ttlSecondsAfterFinished": (
        "a TrainJob is not deleted after it finishes; Trainer v2.3 has no such setting",
        "delete finished TrainJobs yourself",
    ),
    "schedulingPolicy": (
        "a TrainJob has no per-job gang settings; its runtime's podGroupPolicy (or a "
        "Kueue queue) gangs it",
        "put the job on a Kueue queue (label kueue.x-k8s.io/queue-name) or set "
        "podGroupPolicy in the TrainingRuntime",
    ),
    "managedBy": (
        "a TrainJob's spec.managedBy names the Trainer or MultiKueue, not a v1 operator",
        "set spec.managedBy of the TrainJob if MultiKueue dispatches it",
    ),
}


def _run_policy(state: _Job) -> None:
    run_policy = (state.doc.get("spec") or {}).get("runPolicy") or {}
    carried = {"suspend", "activeDeadlineSeconds", "backoffLimit"}
    for key, value in run_policy.items():
        if key in carried:
            continue
        why, fix = _RUN_POLICY.get(
            key, ("convert knows no Trainer v2.3 field for it", "carry it by hand, or remove it")
        )
        for leaf, leaf_value in _leaves(value, ("spec", "runPolicy", key)):
            state.drop(leaf, leaf_value, why, fix)


# --- the runtime --------------------------------------------------------------------


def _fits_shipped(state: _Job, trainer: TrainerPlan) -> bool:
    """Whether the shipped runtime runs the job as the TrainingRuntime would: one node
    template with one container setting only what ``spec.trainer`` sets."""
    if not state.rule.shipped or len(trainer.jobs) != 1:
        return False
    if (state.doc.get("spec") or {}).get("runPolicy", {}).get("backoffLimit") is not None:
        return False
    template = trainer.jobs[0].template
    if set(template) - {"spec"}:
        return False
    pod = template.get("spec") or {}
    if set(pod) - {"containers", "restartPolicy"}:
        return False
    if pod.get("restartPolicy", _SHIPPED_RESTART) != _SHIPPED_RESTART:
        return False
    containers = pod.get("containers") or []
    return len(containers) == 1 and not set(containers[0]) - _TRAINER_FIELDS


def _place_runtime(
    state: _Job, objects: list[Manifest], trainer: TrainerPlan, *, own: bool
) -> list[Manifest]:
    """The ClusterTrainingRuntime the trainer target writes, as this job's own
    TrainingRuntime (its name, its namespace), or the shipped runtime when it fits."""
    runtime, trainjob = objects
    metadata = trainjob["metadata"]
    spec = dict(trainjob["spec"])
    if not own and _fits_shipped(state, trainer):
        node = trainer.jobs[0].template["spec"]["containers"][0]
        nodes = dict(spec["trainer"])
        for key in ("image", "command", "args", "env"):
            if key in node:
                nodes[key] = copy.deepcopy(node[key])
        if node.get("resources"):
            nodes["resourcesPerNode"] = deep_copy(node["resources"])
        spec["runtimeRef"] = {
            "name": state.rule.shipped,
            "apiGroup": API_GROUP,
            "kind": "ClusterTrainingRuntime",
        }
        spec["trainer"] = nodes
        return [{**trainjob, "spec": spec}]
    name = metadata["name"]
    own_runtime = {
        "apiVersion": API_VERSION,
        "kind": "TrainingRuntime",
        "metadata": {
            "name": name,
            "namespace": metadata["namespace"],
            "labels": dict(runtime["metadata"].get("labels") or {}),
        },
        "spec": runtime["spec"],
    }
    spec["runtimeRef"] = {"name": name, "apiGroup": API_GROUP, "kind": "TrainingRuntime"}
    return [own_runtime, {**trainjob, "spec": spec}]
