"""PyTorch: the PyTorchJob (kubeflow.org/v1), torchrun's ``PET_*`` env and elastic mode.

Facts: kubeflow-operators.md §1, §2.3, §4.2 (Training Operator v1.9.4,
pkg/controller.v1/pytorch).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field

from trainjobs.errors import Finding, Rule, Severity
from trainjobs.frameworks.capabilities import Addresses, TrainerConversion
from trainjobs.frameworks.kubeflow_v1 import (
    KubeflowV1Framework,
    ReplicaSpec,
    V1Job,
    V1JobSpec,
    env_var,
)
from trainjobs.k8s.model import K8sModel
from trainjobs.plan import SuccessPolicy
from trainjobs.plan.trainer import ReplicatedJob, TrainerPlan, as_node

__all__ = ["FRAMEWORK", "ElasticPolicy", "PyTorch", "PyTorchJob", "PyTorchJobSpec", "RdzvConf"]

INIT_CONTAINER_IMAGE = "alpine:3.10"
"""The operator's ``--pytorch-init-container-image`` default."""
INIT_CONTAINER_MAX_TRIES = 100
"""The operator's ``--pytorch-init-container-max-tries`` default."""

# The webhook's rules, then the pods and trainer targets' own, declared once.
MASTER_REPLICAS = Rule(
    "pytorch.master_replicas",
    "a PyTorchJob has exactly one Master",
    hint="set Master.replicas to 1 and add Worker replicas instead",
)
WORKER_REPLICAS = Rule(
    "pytorch.worker_replicas",
    "Worker.replicas must be at least 1",
    hint="set Worker.replicas to 1 or more, or remove the Worker spec",
)
ELASTIC_NEEDS_WORKER = Rule(
    "pytorch.elastic_needs_worker",
    "elastic mode scales Workers, but the job has no Worker spec",
    hint="add {worker} or remove elasticPolicy",
)
NPROC_TWICE = Rule(
    "pytorch.nproc_twice",
    "elasticPolicy.nProcPerNode and spec.nprocPerNode are both set",
    hint="drop the deprecated elasticPolicy.nProcPerNode",
)
NPROC_DEPRECATED = Rule(
    "pytorch.nproc_deprecated",
    "elasticPolicy.nProcPerNode is deprecated since v1.7",
    hint="move it to spec.nprocPerNode",
    severity=Severity.WARNING,
)
ELASTIC_BOUNDS = Rule(
    "pytorch.elastic_bounds",
    "minReplicas is larger than maxReplicas",
    hint="lower minReplicas to at most {most}",
)
NPROC = Rule(
    "pytorch.nproc",
    "nprocPerNode must be auto, cpu, gpu or a whole number",
    hint="e.g. nprocPerNode: '4' for four processes per pod",
)
ELASTIC_HPA = Rule(
    "pytorch.elastic_hpa",
    "the operator would scale the Workers with an HPA on the PyTorchJob; on the pods target "
    "there is no PyTorchJob, so no HPA: the Worker count stays as rendered (torchrun still "
    "tolerates workers leaving and rejoining within minReplicas..maxReplicas)",
    hint="change Worker replicas in the stack to scale, or use the operator target for "
    "autoscaling; remove metrics to silence this",
    severity=Severity.WARNING,
)
TRAINER_ELASTIC = Rule(
    "trainer.elastic",
    "Trainer v2.3 runs a fixed number of nodes (its torch policy has no elastic mode): the "
    "TrainJob runs on {nodes} nodes, not {low} to {high}",
    hint="set the replicas you want, or use the operator or pods target to keep elastic training",
    severity=Severity.WARNING,
)
TRAINER_ONE_TEMPLATE = Rule(
    "trainer.one_template",
    "Trainer v2 starts every node from one pod template, but the Master's differs from the "
    "Worker's",
    hint="give Master the Worker's pod spec, or use the operator or pods target",
)
TRAINER_RESTART_POLICY = Rule(
    "trainer.restart_policy",
    "Trainer runs nodes as Job pods, which restart OnFailure or Never",
    hint="use OnFailure",
)
TRAINER_NPROC = Rule(
    "trainer.nproc",
    "Trainer v2.3 takes a number of processes per node, or none for auto (one per GPU, else "
    "per CPU)",
    hint="write a number, e.g. '4', or remove it",
)


def _is_whole_number(text: str) -> bool:
    """Digits only, as the operator's integer parse accepts (ASCII, unlike str.isdigit)."""
    return text.isascii() and text.isdigit()


class RdzvConf(K8sModel):
    """One extra rendezvous setting passed to torchrun (``key=value`` in PET_RDZV_CONF)."""

    key: str | None = Field(default=None, description="Setting name; unset = empty.")
    value: str | None = Field(default=None, description="Setting value; unset = empty.")


class ElasticPolicy(K8sModel):
    """torchrun elastic mode: the worker count may vary between the bounds."""

    min_replicas: int | None = Field(
        default=None, ge=1, description="Fewest workers; default maxReplicas, else Worker replicas."
    )
    max_replicas: int | None = Field(
        default=None, ge=1, description="Most workers; default minReplicas, else Worker replicas."
    )
    # The operator's API names c10d, etcd and etcd-v2, but neither its CRD nor its
    # webhook restricts the value and torchrun has more (static), so any is passed on.
    rdzv_backend: str | None = Field(
        default=None,
        description="Rendezvous backend (PET_RDZV_BACKEND): c10d, etcd, etcd-v2 …; default c10d.",
    )
    rdzv_port: int | None = Field(
        default=None, ge=1, le=65535, description="Rendezvous port; default the Worker port."
    )
    rdzv_host: str | None = Field(
        default=None, description="Rendezvous host; default <job>-worker-0."
    )
    rdzv_id: str | None = Field(default=None, description="Rendezvous id; unset = none.")
    rdzv_conf: list[RdzvConf] | None = Field(
        default=None, description="Extra rendezvous settings (PET_RDZV_CONF)."
    )
    standalone: bool | None = Field(
        default=None, description="Single-node rendezvous (PET_STANDALONE); default false."
    )
    n_proc_per_node: int | None = Field(
        default=None, ge=1, description="Deprecated since v1.7: use spec.nprocPerNode."
    )
    max_restarts: int | None = Field(
        default=None, ge=0, description="Worker-group restarts torchrun allows."
    )
    metrics: list[dict[str, Any]] | None = Field(
        default=None,
        description=(
            "autoscaling/v2 MetricSpecs; when set (even to []) the operator's HPA scales the "
            "workers (none on the pods target: no PyTorchJob to scale); unset = no HPA."
        ),
    )


class PyTorchJobSpec(V1JobSpec):
    """``spec`` of a PyTorchJob."""

    elastic_policy: ElasticPolicy | None = Field(
        default=None, description="Elastic (torchrun) mode; unset = fixed size."
    )
    pytorch_replica_specs: dict[str, ReplicaSpec] = Field(
        description="Replica types (Master, Worker) and their pods."
    )
    nproc_per_node: str | None = Field(
        default=None,
        description="Processes per pod: auto, cpu, gpu or an integer; default auto.",
    )


class PyTorchJob(V1Job):
    """A PyTorchJob exactly as kubeflow.org/v1 accepts it."""

    kind: Literal["PyTorchJob"] = "PyTorchJob"
    spec: PyTorchJobSpec


class PyTorch(KubeflowV1Framework[PyTorchJob], TrainerConversion, Addresses):
    """PyTorch DistributedDataParallel via torchrun, fixed-size or elastic."""

    name = "pytorch"
    title = "PyTorch (PyTorchJob)"
    # pytorchjob_webhook.go validateSpec (elasticPolicy needs a Worker, nProcPerNode
    # deprecated: a warning, forbidden beside spec.nprocPerNode) and
    # validatePyTorchReplicaSpecs (Master replicas must be 1, Worker at least 1).
    webhook_rules = KubeflowV1Framework.webhook_rules | {
        "pytorch.master_replicas",
        "pytorch.worker_replicas",
        "pytorch.elastic_needs_worker",
        "pytorch.nproc_twice",
        "pytorch.nproc_deprecated",
    }
    replica_types = ("Master", "Worker")
    default_port = 23456
    default_restart_policy = "OnFailure"
    targets = ("operator", "pods", "trainer")
    success_rule = (
        "with a Master: when the Master succeeds; otherwise when every Worker succeeds "
        "(elastic: when any Worker succeeds)"
    )

    def success_policy(self, job: PyTorchJob) -> SuccessPolicy:
        if "Master" in job.replica_specs:
            return SuccessPolicy(roles=("Master",), summary="the Master succeeds")
        if job.spec.elastic_policy is not None:
            return SuccessPolicy(roles=("Worker",), need="any", summary="any Worker succeeds")
        return SuccessPolicy(roles=("Worker",), summary="every Worker succeeds")

    def is_master(self, job: PyTorchJob, rtype: str, index: int) -> bool:
        if "Master" in job.replica_specs:
            return rtype == "Master"
        return rtype == "Worker" and index == 0

    def default_spec(self, job: PyTorchJob) -> PyTorchJob:
        spec = job.spec
        update: dict[str, Any] = {}
        elastic = spec.elastic_policy
        if spec.nproc_per_node is None and (elastic is None or elastic.n_proc_per_node is None):
            update["nproc_per_node"] = "auto"
        if elastic is not None:
            low, high = elastic.min_replicas, elastic.max_replicas
            workers = job.replicas("Worker")
            low, high = low or high or workers, high or low or workers
            update["elastic_policy"] = elastic.model_copy(
                update={"min_replicas": low, "max_replicas": high}
            )
        if not update:
            return job
        return job.model_copy(update={"spec": spec.model_copy(update=update)})

    def validate_spec(self, job: PyTorchJob) -> list[Finding]:
        findings: list[Finding] = []
        base = f"spec.{self.replica_alias}"
        if "Master" in job.replica_specs and job.replicas("Master") != 1:
            findings.append(MASTER_REPLICAS.at(f"{base}.Master.replicas", job.replicas("Master")))
        if "Worker" in job.replica_specs and job.replicas("Worker") < 1:
            findings.append(WORKER_REPLICAS.at(f"{base}.Worker.replicas", job.replicas("Worker")))
        elastic = job.spec.elastic_policy
        if elastic is not None:
            if "Worker" not in job.replica_specs:
                worker = f"{base}.Worker"
                findings.append(ELASTIC_NEEDS_WORKER.at("spec.elasticPolicy", worker=worker))
            if elastic.n_proc_per_node is not None:
                # Set twice, or only in the deprecated place.
                twice = job.spec.nproc_per_node is not None
                rule = NPROC_TWICE if twice else NPROC_DEPRECATED
                path = "spec.elasticPolicy.nProcPerNode"
                findings.append(rule.at(path, elastic.n_proc_per_node))
            if (elastic.min_replicas or 0) > (elastic.max_replicas or 0):
                path, most = "spec.elasticPolicy.minReplicas", elastic.max_replicas
                findings.append(ELASTIC_BOUNDS.at(path, elastic.min_replicas, most=most))
        nproc = job.spec.nproc_per_node
        if (
            nproc is not None
            and nproc not in ("auto", "cpu", "gpu")
            and not _is_whole_number(nproc)
        ):
            findings.append(NPROC.at("spec.nprocPerNode", nproc))
        return findings

    def cluster_envs(self, job: PyTorchJob) -> Callable[[str, int], list[dict[str, Any]]]:
        # What every pod shares is worked out once per job; only the rank differs.
        spec = job.spec
        total = job.replicas("Master") + job.replicas("Worker")
        has_master = "Master" in job.replica_specs
        port = master = world = ""
        if has_master:
            port = str(self.port_of(job, "Master", self.default_port))
            master = self.pod_name(job, "Master", 0)
            nproc = spec.nproc_per_node or ""
            world = str(total * (int(nproc) if _is_whole_number(nproc) else 1))
        tail: list[tuple[str, str]] = []
        if spec.nproc_per_node is not None:
            tail.append(("PET_NPROC_PER_NODE", spec.nproc_per_node))
        elastic = spec.elastic_policy
        if elastic is None:
            tail.append(("PET_NNODES", str(total)))
        else:
            host = elastic.rdzv_host or self.pod_name(job, "Worker", 0)
            rdzv_port = elastic.rdzv_port or self.port_of(job, "Worker", self.default_port)
            tail += [
                ("PET_RDZV_ENDPOINT", f"{host}:{rdzv_port}"),
                ("PET_RDZV_BACKEND", elastic.rdzv_backend or "c10d"),
                ("PET_NNODES", f"{elastic.min_replicas}:{elastic.max_replicas}"),
            ]
            if elastic.max_restarts is not None:
                tail.append(("PET_MAX_RESTARTS", str(elastic.max_restarts)))
            if elastic.n_proc_per_node is not None:
                tail.append(("PET_NPROC_PER_NODE", str(elastic.n_proc_per_node)))
            if elastic.rdzv_id is not None:
                tail.append(("PET_RDZV_ID", elastic.rdzv_id))
            if elastic.rdzv_conf:
                conf = ",".join(f"{c.key or ''}={c.value or ''}" for c in elastic.rdzv_conf)
                tail.append(("PET_RDZV_CONF", conf))
            if elastic.standalone:
                tail.append(("PET_STANDALONE", ""))

        def env(rtype: str, index: int) -> list[dict[str, Any]]:
            out = [env_var("PYTHONUNBUFFERED", "1")]
            if has_master:
                rank = str(index if rtype == "Master" else index + 1)
                out += [
                    env_var("MASTER_PORT", port),
                    env_var("PET_MASTER_PORT", port),
                    env_var("MASTER_ADDR", master),
                    env_var("PET_MASTER_ADDR", master),
                    env_var("WORLD_SIZE", world),
                    env_var("RANK", rank),
                    env_var("PET_NODE_RANK", rank),
                ]
            out += [env_var(name, value) for name, value in tail]
            return out

        return env

    def init_containers(self, job: PyTorchJob, rtype: str, index: int) -> list[dict[str, Any]]:
        if rtype != "Worker" or "Master" not in job.replica_specs:
            return []
        master = self.pod_name(job, "Master", 0)
        wait = (
            f"err=1;for i in $(seq {INIT_CONTAINER_MAX_TRIES}); do if nslookup {master}; "
            "then err=0 && break; fi;echo waiting for master; sleep 2; done; exit $err"
        )
        return [
            {
                "name": "init-pytorch",
                "image": INIT_CONTAINER_IMAGE,
                "imagePullPolicy": "IfNotPresent",
                "resources": {
                    "limits": {"cpu": "100m", "memory": "20Mi"},
                    "requests": {"cpu": "50m", "memory": "10Mi"},
                },
                "command": ["sh", "-c", wait],
            }
        ]

    def pods_findings(self, job: PyTorchJob) -> list[Finding]:
        """Besides the defaults: elastic ``metrics`` make no HPA on the pods target.

        The operator's HPA scales the PyTorchJob (``scaleTargetRef`` is the job,
        training-operator pkg/controller.v1/pytorch/hpa.go); without the operator
        there is no PyTorchJob to scale, so trainjobs emits none.
        """
        findings = super().pods_findings(job)
        elastic = job.spec.elastic_policy
        # The operator tests for nil: `metrics: []` would still make an HPA.
        if elastic is not None and elastic.metrics is not None:
            findings.append(ELASTIC_HPA.at("spec.elasticPolicy.metrics"))
        return findings

    def trainer_plan(self, job: PyTorchJob) -> tuple[TrainerPlan | None, list[Finding]]:
        """Every replica becomes a node of the runtime's ``torch`` policy (Master as node
        0); the Worker's pod template (else the Master's) is the node template, its
        ``pytorch`` container renamed ``node``. Trainer injects ``PET_*`` itself."""
        findings: list[Finding] = []
        base = f"spec.{self.replica_alias}"
        specs = job.replica_specs
        elastic = job.spec.elastic_policy
        nodes = job.replicas("Master") + job.replicas("Worker")
        dropped: list[Finding] = []
        if elastic is not None:
            low, high = elastic.min_replicas, elastic.max_replicas
            bounds = f"{low}:{high}"
            dropped.append(
                TRAINER_ELASTIC.at("spec.elasticPolicy", bounds, nodes=nodes, low=low, high=high)
            )
        source = "Worker" if "Worker" in specs else "Master"
        if "Master" in specs and "Worker" in specs:
            master, worker = (specs[r].template.get("spec") or {} for r in ("Master", "Worker"))
            if master != worker:
                findings.append(TRAINER_ONE_TEMPLATE.at(f"{base}.Master.template.spec"))
        policy = specs[source].restart_policy or self.default_restart_policy
        if policy == "Always":
            findings.append(TRAINER_RESTART_POLICY.at(f"{base}.{source}.restartPolicy", policy))
        nproc = job.spec.nproc_per_node
        if nproc in ("cpu", "gpu"):
            findings.append(TRAINER_NPROC.at("spec.nprocPerNode", nproc))
        if findings:
            return None, [*dropped, *findings]
        node = as_node(specs[source].template, self.default_container, self.default_port_name)
        node.setdefault("spec", {})["restartPolicy"] = "Never" if policy == "ExitCode" else policy
        plan = TrainerPlan(
            framework="torch",
            ml_policy={"numNodes": nodes, "torch": {}},
            jobs=(ReplicatedJob("node", node, trainer=True),),
            num_nodes=nodes,
            num_proc_per_node=int(nproc) if nproc and nproc.isdigit() else None,
        )
        return plan, dropped

    def addresses(self, job: Any) -> dict[str, str]:
        return self.first_pod_address(job, "master", "Master", "Worker")


FRAMEWORK = PyTorch()
