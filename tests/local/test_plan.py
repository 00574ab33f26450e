"""The pods expansion → process specs: commands, env, addresses, files, findings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import EXAMPLES
from trainjobs.errors import SpecError
from trainjobs.frameworks.trainjob.model import TrainJob
from trainjobs.frameworks.trainjob.run_rules import trainjob_run_rules
from trainjobs.local.environment import Machine
from trainjobs.local.plan import Backend, LocalPlan, build_plan, rewrite_paths
from trainjobs.local.run import backends_of
from trainjobs.plan import SuccessPolicy
from trainjobs.plan.jobset import JobSetPlan
from trainjobs.render import render
from trainjobs.spec import load_path

TFJOB = """
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: tj, namespace: ml}
spec:
  tfReplicaSpecs:
    Chief:
      template:
        spec:
          containers:
            - name: tensorflow
              image: tf:1
              command: [python, train.py]
              args: ["--peers=tj-worker-0.ml.svc:2222", "--me=$(POD_NAME)"]
              env:
                - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
    Worker:
      replicas: 2
      restartPolicy: ExitCode
      template:
        spec:
          volumes:
            - name: hosts
              configMap: {name: hosts, items: [{key: hostfile, path: hostfile, mode: 292}]}
            - {name: scratch, emptyDir: {}}
          containers:
            - name: sidecar
              image: busybox
              command: [sleep, "1"]
            - name: tensorflow
              image: tf:1
              workingDir: /data/run
              command: [python, /etc/mpi/run.py]
              args: ["--hostfile", "/etc/mpi/hostfile", "--out=/data/run/out"]
              env: [{name: HOSTFILE, value: /etc/mpi/hostfile}]
              volumeMounts:
                - {name: hosts, mountPath: /etc/mpi}
                - {name: scratch, mountPath: /data}
"""

HOSTS = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "hosts", "namespace": "ml"},
    "data": {"hostfile": "tj-worker-0.ml.svc slots=1\ntj-worker-1 slots=1\n"},
}


def _plan(
    tmp_path: Path, text: str = TFJOB, others: list[dict[str, Any]] | None = None
) -> LocalPlan:
    job_file = tmp_path / "job.yaml"
    job_file.write_text(text)
    rendered = render(load_path(job_file), target="pods").jobs[0]
    return build_plan(
        rendered,
        scratch=tmp_path / "scratch",
        base_dir=tmp_path,
        machine=Machine(),
        generate=lambda g: "x",
        others=[HOSTS] if others is None else others,
    )


def test_each_replica_is_one_process_with_its_address(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    assert plan.title == "TFJob ml/tj"
    assert [(p.name, p.address, p.container) for p in plan.processes] == [
        ("tj-chief-0", "127.0.0.2", "tensorflow"),
        ("tj-worker-0", "127.0.0.3", "tensorflow"),
        ("tj-worker-1", "127.0.0.4", "tensorflow"),
    ]
    chief = plan.processes[0]
    assert chief.argv == ("python", "train.py", "--peers=127.0.0.3:2223", "--me=tj-chief-0")
    assert chief.cwd == tmp_path  # no workingDir: the job file's folder
    # TensorFlow binds every address, so each replica has a port of its own.
    assert [p.ports for p in plan.processes] == [((2222, 2222),), ((2222, 2223),), ((2222, 2224),)]
    assert chief.env["TF_CONFIG"] == (
        '{"cluster":{"chief":["127.0.0.2:2222"],"worker":["127.0.0.3:2223","127.0.0.4:2224"]},'
        '"task":{"type":"chief","index":0},"environment":"cloud"}'
    )


def test_each_replica_has_a_tmpdir_of_its_own_unless_its_container_sets_one(
    tmp_path: Path,
) -> None:
    """A pod's /tmp is its own: on one machine, MPI daemons of two "hosts" sharing /tmp race
    to make one session folder (Open MPI's orted failed with mkdir: File exists)."""
    text = TFJOB.replace(
        "env: [{name: HOSTFILE, value: /etc/mpi/hostfile}]",
        "env: [{name: HOSTFILE, value: /etc/mpi/hostfile}, {name: TMPDIR, value: /scratch}]",
    )
    plan = _plan(tmp_path, text)
    chief, worker_0, worker_1 = plan.processes
    scratch = tmp_path / "scratch"
    assert chief.env["TMPDIR"] == str(scratch / "tj-chief-0" / "tmp")
    assert scratch / "tj-chief-0" / "tmp" in plan.folders
    # The workers' container sets TMPDIR: its value wins, as every container env does.
    assert worker_0.env["TMPDIR"] == worker_1.env["TMPDIR"] == "/scratch"
    assert not any(f.name == "tmp" and "worker" in f.parent.name for f in plan.folders)


def test_restart_policy_and_success_rule_come_from_the_framework(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    assert [p.replica.restart_policy for p in plan.processes] == ["Never", "ExitCode", "ExitCode"]
    assert plan.lifecycle.success.summary == "the Chief succeeds"


def test_mounted_config_maps_become_files_and_paths_are_rewritten(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    worker = plan.processes[2]
    volumes = tmp_path / "scratch" / "tj-worker-1" / "volumes"
    assert [(f.path, f.content, f.mode) for f in plan.files if "tj-worker-1" in str(f.path)] == [
        (volumes / "hosts" / "hostfile", b"127.0.0.3 slots=1\n127.0.0.4 slots=1\n", 0o444)
    ]
    assert worker.argv == (
        "python",
        f"{volumes}/hosts/run.py",
        "--hostfile",
        f"{volumes}/hosts/hostfile",
        f"--out={volumes}/scratch/run/out",
    )
    assert worker.env["HOSTFILE"] == f"{volumes}/hosts/hostfile"
    assert worker.cwd == volumes / "scratch" / "run"
    assert worker.skipped == ("sidecar",)


def test_a_missing_config_map_and_a_missing_command_are_findings(tmp_path: Path) -> None:
    text = TFJOB.replace("command: [python, train.py]", "image: tf:1")
    with pytest.raises(SpecError) as info:
        _plan(tmp_path, text.replace("image: tf:1\n              image: tf:1", "image: tf:1"), [])
    source = str(tmp_path / "job.yaml")
    assert [str(f) for f in info.value.findings] == [
        f"error: {source}: jobs[0].spec.tfReplicaSpecs.Chief.template.spec.containers[0].command: "
        "the container sets no command; run-local runs commands on this machine and cannot read "
        "the image's entrypoint (got 'tensorflow'); fix: set command (and args) in the pod "
        "template, e.g. command: [python, train.py]",
    ] + [
        f"error: {source}: jobs[0].spec.tfReplicaSpecs.Worker.template.spec.volumes[0].configMap: "
        "the ConfigMap 'hosts' is not part of the job, so run-local cannot mount it (got 'hosts'); "
        "fix: render the ConfigMap with the job, or mark the volume optional"
    ] * 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/etc/mpi/hostfile", "/tmp/v/hostfile"),
        ("/etc/mpi", "/tmp/v"),
        ("--f=/etc/mpi/x:/etc/mpi/y", "--f=/tmp/v/x:/tmp/v/y"),
        ("/etc/mpix/hostfile", "/etc/mpix/hostfile"),
        ("/root/etc/mpi", "/root/etc/mpi"),
        ("/etc/mpi/sub/deeper", "/tmp/sub-mount/deeper"),  # the longer mount wins
    ],
)
def test_rewrite_paths(text: str, expected: str) -> None:
    mounts = [("/etc/mpi", "/tmp/v"), ("/etc/mpi/sub/", "/tmp/sub-mount")]
    assert rewrite_paths(text, mounts) == expected


REDIS_STACK = """
apiVersion: trainjobs.dev/v1alpha1
kind: RedisBackend
metadata: {name: redis, namespace: ml}
spec: {password: true}
---
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: tj, namespace: ml}
spec:
  tfReplicaSpecs:
    Worker:
      template:
        spec:
          containers: [{name: tensorflow, image: tf:1, command: [python, "$(REDIS_HOST)"]}]
trainjobs: {target: pods, backend: redis}
"""


def test_a_backend_runs_its_entrypoint_with_the_generated_password(tmp_path: Path) -> None:
    path = tmp_path / "stack.yaml"
    path.write_text(REDIS_STACK)
    rendering = render(load_path(path), target="pods")
    rendered = rendering.jobs[0]
    backends = backends_of(rendering, rendered)
    assert backends == [
        Backend("redis", "RedisBackend", ("redis-server",), "backends[0]", str(path))
    ]
    plan = build_plan(
        rendered,
        scratch=tmp_path / "s",
        base_dir=tmp_path,
        machine=Machine(),
        generate=lambda g: "pw-1234",
        others=rendering.manifests,
        backends=backends,
    )
    redis, worker = plan.processes
    assert (redis.name, redis.address, redis.backend, redis.replica.restart_policy) == (
        "redis",
        "127.0.0.3",
        True,
        "Always",
    )
    assert redis.argv == (
        "redis-server",
        "--port",
        "6379",
        "--save",
        "",
        "--appendonly",
        "no",
        "--requirepass",
        "pw-1234",
    )
    assert redis.secrets == frozenset({"pw-1234"})
    # The job reaches the backend's Service at the backend's address.
    assert worker.argv == ("python", "127.0.0.3")
    assert (worker.env["REDIS_HOST"], worker.env["REDIS_PORT"]) == ("127.0.0.3", "6379")
    assert worker.env["REDIS_PASSWORD"] == "pw-1234"
    assert worker.secrets == frozenset({"pw-1234"})


MSJOB = """
apiVersion: mindspore.gitee.com/v1
kind: MSJob
metadata: {name: ms, namespace: ml}
spec:
  msReplicaSpecs:
    Scheduler:
      template:
        spec:
          containers: [{name: mindspore, image: ms:1, command: [python, train.py]}]
    Worker:
      replicas: 2
      template:
        spec:
          containers: [{name: mindspore, image: ms:1, command: [python, train.py]}]
"""


def test_service_environment_variables_reach_the_scheduler(tmp_path: Path) -> None:
    # MS_SCHED_HOST is $(MS_SCHEDULER_0_SERVICE_HOST): the kubelet's service env.
    plan = _plan(tmp_path, MSJOB, [])
    scheduler, worker, _ = plan.processes
    assert scheduler.env["MS_SCHED_HOST"] == "127.0.0.2"  # its own podIP (a fieldRef)
    assert worker.env["MS_SCHED_HOST"] == "127.0.0.2"
    assert {k: v for k, v in worker.env.items() if k.startswith("MS_SCHEDULER_0_")} == {
        "MS_SCHEDULER_0_SERVICE_HOST": "127.0.0.2",
        "MS_SCHEDULER_0_SERVICE_PORT": "2222",
        "MS_SCHEDULER_0_SERVICE_PORT_MSJOB_PORT": "2222",
        "MS_SCHEDULER_0_PORT": "tcp://127.0.0.2:2222",
        "MS_SCHEDULER_0_PORT_2222_TCP": "tcp://127.0.0.2:2222",
        "MS_SCHEDULER_0_PORT_2222_TCP_PROTO": "tcp",
        "MS_SCHEDULER_0_PORT_2222_TCP_PORT": "2222",
        "MS_SCHEDULER_0_PORT_2222_TCP_ADDR": "127.0.0.2",
    }
    assert (worker.env["MS_ROLE"], worker.env["MS_WORKER_NUM"]) == ("MS_WORKER", "2")


TRAINJOB = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: with-data
  namespace: ml
  labels: {trainer.kubeflow.org/framework: torch}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      volumeClaimPolicies:
        - templates:
            - metadata: {name: initializer}
              spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
      replicatedJobs:
        - name: dataset-initializer
          template:
            metadata:
              labels: {trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer}
            spec:
              template:
                spec:
                  containers:
                    - name: dataset-initializer
                      image: init:1
                      command: [python, fetch.py, --into=/workspace/data]
                      volumeMounts: [{name: initializer, mountPath: /workspace}]
        - name: node
          dependsOn: [{name: dataset-initializer, status: Complete}]
          template:
            metadata:
              labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: torch:1
                      volumeMounts: [{name: initializer, mountPath: /workspace}]
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tj, namespace: ml}
spec:
  runtimeRef: {name: with-data, kind: TrainingRuntime}
  initializer:
    dataset: {storageUri: "hf://org/set"}
  trainer:
    numNodes: 2
    command: [torchrun, train.py, --data=/workspace/data]
    env: [{name: PEER, value: "tj-node-0-1.tj.ml.svc:29500"}]
"""


def test_a_trainjob_runs_one_process_per_pod_of_its_indexed_jobs(tmp_path: Path) -> None:
    plan = _plan(tmp_path, TRAINJOB, [])
    assert plan.title == "TrainJob ml/tj"
    assert [
        (p.name, p.address, p.container, p.replica.role, p.replica.index) for p in plan.processes
    ] == [
        (
            "tj-dataset-initializer-0-0",
            "127.0.0.2",
            "dataset-initializer",
            "dataset-initializer",
            0,
        ),
        ("tj-node-0-0", "127.0.0.3", "node", "node", 0),
        ("tj-node-0-1", "127.0.0.4", "node", "node", 1),
    ]
    init, node0, node1 = plan.processes
    assert init.replica.depends_on == ()
    assert node1.replica.depends_on == (("dataset-initializer", "Complete"),)
    shared = str(tmp_path / "scratch" / "shared" / "initializer-tj")
    assert init.argv == ("python", "fetch.py", f"--into={shared}/data")
    assert init.env["STORAGE_URI"] == "hf://org/set"
    assert init.env["JOB_COMPLETION_INDEX"] == "0"
    assert node1.argv == ("torchrun", "train.py", f"--data={shared}/data")
    # Trainer's torch env; the master is node 0's hostname in the subdomain, on loopback.
    assert {k: v for k, v in node1.env.items() if k.startswith(("PET_", "JOB_", "PEER"))} == {
        "PEER": "127.0.0.4:29500",
        "PET_NNODES": "2",
        "PET_NPROC_PER_NODE": "1",
        "PET_NODE_RANK": "1",
        "PET_MASTER_ADDR": "127.0.0.3",
        "PET_MASTER_PORT": "29500",
        "JOB_COMPLETION_INDEX": "1",
    }
    assert node0.env["PET_NODE_RANK"] == "0"
    # The same container port on each pod: each listens on its own address.
    assert [p.ports for p in plan.processes] == [(), ((29500, 29500),), ((29500, 29500),)]
    assert plan.lifecycle.success.summary == "every pod succeeds (JobSet successPolicy All)"
    assert plan.lifecycle.backoff_limit == 6
    assert [p.replica.restart_policy for p in plan.processes] == ["OnFailure"] * 3


def test_an_initializer_without_a_command_is_refused_naming_what_waits(tmp_path: Path) -> None:
    text = TRAINJOB.replace("command: [python, fetch.py, --into=/workspace/data]", "")
    with pytest.raises(SpecError) as info:
        _plan(tmp_path, text, [])
    source = str(tmp_path / "job.yaml")
    assert [str(f) for f in info.value.findings] == [
        f"error: {source}: jobs[1] → Job ml/tj-dataset-initializer-0: spec.template.spec."
        "containers[0].command: the container sets no command; run-local runs commands on this "
        "machine and cannot read the image's entrypoint (init:1); 'node' starts only once "
        "'dataset-initializer' has completed (JobSet dependsOn), so run-local cannot run this "
        "job (got 'dataset-initializer'); fix: give the runtime's dataset-initializer container "
        "a command that does its work on this machine (it gets the same env and volumes), or "
        "run the job on a cluster"
    ]


def test_nproc_auto_is_noted(tmp_path: Path) -> None:
    # With a GPU per node, Trainer leaves torchrun's count to torchrun: auto.
    text = TRAINJOB.replace(
        "    env: [{name: PEER",
        "    resourcesPerNode: {limits: {nvidia.com/gpu: 1}}\n    env: [{name: PEER",
    )
    plan = _plan(tmp_path, text, [])
    assert plan.processes[1].env["PET_NPROC_PER_NODE"] == "auto"
    assert (
        "PET_NPROC_PER_NODE=auto (tj-node-0-0, tj-node-0-1): torchrun starts one process per "
        "GPU, or per CPU without one (1 here), where a cluster node has its own count"
    ) in plan.notes


def test_jobset_rules_for_two_replicated_jobs_of_several_jobs_and_pods() -> None:
    job = TrainJob.model_validate(
        {
            "apiVersion": "trainer.kubeflow.org/v1alpha1",
            "kind": "TrainJob",
            "metadata": {"name": "js"},
            "spec": {"runtimeRef": {"name": "torch-distributed"}, "activeDeadlineSeconds": 60},
        }
    )

    def rjob(name: str, replicas: int, pods: int, **spec: Any) -> dict[str, Any]:
        job_spec = {"completions": pods, "parallelism": pods, **spec}
        return {"name": name, "replicas": replicas, "template": {"spec": job_spec}}

    workers = rjob("worker", 2, 2, backoffLimit=2)
    workers["dependsOn"] = [{"name": "launcher", "status": "Ready"}]
    jobset = JobSetPlan(
        name="js",
        namespace="ml",
        spec={
            "replicatedJobs": [rjob("launcher", 1, 1), workers],
            "successPolicy": {"operator": "Any", "targetReplicatedJobs": ["launcher"]},
        },
    )
    rules = trainjob_run_rules(job, jobset)
    assert [(r.role, r.index, r.workload, r.depends_on) for r in rules.replicas] == [
        ("launcher", 0, "js-launcher-0-0", ()),
        ("worker", 0, "js-worker-0-0", (("launcher", "Ready"),)),
        ("worker", 1, "js-worker-0-1", (("launcher", "Ready"),)),
        ("worker", 2, "js-worker-1-0", (("launcher", "Ready"),)),
        ("worker", 3, "js-worker-1-1", (("launcher", "Ready"),)),
    ]
    assert rules.success == SuccessPolicy(
        roles=("launcher",),
        need="any",
        summary="a pod of launcher succeeds (JobSet successPolicy Any)",
    )
    # The smallest Job budget (the workers' 2; the launcher's is Kubernetes' 6).
    assert (rules.backoff_limit, rules.active_deadline_seconds) == (2, 60)


def test_the_worked_example_runs_as_two_node_pods(tmp_path: Path) -> None:
    # kubeflow-operators.md §7.3: tj, torch-distributed, numNodes 2, 2 GPUs per node.
    text = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tj, namespace: default}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    numNodes: 2
    command: [torchrun, train.py]
    resourcesPerNode: {limits: {nvidia.com/gpu: 2}}
"""
    plan = _plan(tmp_path, text, [])
    assert [(p.name, p.address) for p in plan.processes] == [
        ("tj-node-0-0", "127.0.0.2"),
        ("tj-node-0-1", "127.0.0.3"),
    ]
    assert plan.hosts.names["tj-node-0-0.tj"] == "tj-node-0-0"
    assert [p.env["PET_MASTER_ADDR"] for p in plan.processes] == ["127.0.0.2"] * 2
    assert [p.env["PET_NODE_RANK"] for p in plan.processes] == ["0", "1"]
    assert plan.processes[0].image == "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime"


def test_an_mpi_trainjobs_nodes_serve_the_launchers_remote_shell(tmp_path: Path) -> None:
    text = (EXAMPLES / "trainjob-mpi" / "trainjob.yaml").read_text()
    plan = _plan(tmp_path, text, [])
    assert [(p.name, p.address, p.replica.remote_shell) for p in plan.processes] == [
        ("pi-launcher-0-0", "127.0.0.2", False),
        ("pi-node-0-0", "127.0.0.3", True),
        ("pi-node-0-1", "127.0.0.4", True),
    ]
    launcher = plan.processes[0]
    assert launcher.argv == ("mpirun", "/home/mpiuser/pi")
    # Trainer's hostfile names each node pod in the subdomain: here, its address.
    [hostfile] = [f for f in plan.files if f.path.name == "hostfile"]
    assert hostfile.content == b"127.0.0.3 slots=2\n127.0.0.4 slots=2\n"
    assert launcher.env["OMPI_MCA_orte_default_hostfile"] == str(hostfile.path)
    assert launcher.env["OMPI_MCA_plm_rsh_agent"] == str(tmp_path / "scratch" / "rsh" / "agent")
    assert plan.lifecycle.success.summary == (
        "every pod of launcher succeeds (JobSet successPolicy All)"
    )
