"""MPIJob v2beta1 (MPI Operator v0.8): the reference's worked example (§4.8) literally,
implementations, runLauncherAsWorker, SSH, the launcher Job, defaults and rules."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.expand import expand_pods
from trainjobs.check import crd_schema, run
from trainjobs.errors import Severity, SpecError
from trainjobs.frameworks.mpi import FRAMEWORK as MPI
from trainjobs.frameworks.mpi import MPIJob
from trainjobs.k8s.generated import parse
from trainjobs.k8s.yamlio import dump_all
from trainjobs.spec import parse_documents

WORKED_HOSTFILE = "pi-worker-0.pi.default.svc slots=1\npi-worker-1.pi.default.svc slots=1\n"
WORKED_DISCOVER_HOSTS = (
    "#!/bin/sh\necho pi-worker-0.pi.default.svc\necho pi-worker-1.pi.default.svc\n"
)
WORKED_LAUNCHER_ENV = [
    ("K_MPI_JOB_ROLE", "launcher"),
    ("OMPI_MCA_orte_keep_fqdn_hostnames", "true"),
    ("OMPI_MCA_orte_default_hostfile", "/etc/mpi/hostfile"),
    ("OMPI_MCA_plm_rsh_args", "-o ConnectionAttempts=10"),
    ("OMPI_MCA_orte_set_default_slots", "1"),
    ("NVIDIA_VISIBLE_DEVICES", ""),
    ("NVIDIA_DRIVER_CAPABILITIES", ""),
]
SSH_ITEMS = [
    {"key": "ssh-privatekey", "path": "id_rsa"},
    {"key": "ssh-publickey", "path": "id_rsa.pub"},
    {"key": "ssh-publickey", "path": "authorized_keys"},
]


def _replica(replicas: int | None = None, **spec: Any) -> dict[str, Any]:
    container = {"name": "mpi", "image": "mpioperator/mpi-pi:openmpi", **spec}
    replica: dict[str, Any] = {"template": {"spec": {"containers": [container]}}}
    if replicas is not None:
        replica["replicas"] = replicas
    return replica


def mpijob(specs: dict[str, Any] | None = None, name: str = "pi", **spec: Any) -> dict[str, Any]:
    if specs is None:
        specs = {"Launcher": _replica(1, command=["mpirun", "pi"]), "Worker": _replica(2)}
    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": name},
        "spec": {"mpiReplicaSpecs": specs, **spec},
    }


def _typed(doc: dict[str, Any]) -> MPIJob:
    return MPIJob.model_validate(doc)


def objects(doc: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    job = MPI.default(_typed(doc))
    assert [f for f in MPI.validate(job) if f.severity is Severity.ERROR] == []
    return {(o["kind"], o["metadata"]["name"]): o for o in expand_pods(MPI, job)}


def _env(container: dict[str, Any]) -> list[tuple[str, str]]:
    return [(e["name"], e["value"]) for e in container.get("env", [])]


def _launcher_pod(objs: dict[tuple[str, str], dict[str, Any]]) -> dict[str, Any]:
    template: dict[str, Any] = objs[("Job", "pi-launcher")]["spec"]["template"]
    return template


def messages(doc: dict[str, Any]) -> list[str]:
    return [f.render() for f in MPI.validate(MPI.default(_typed(doc)))]


# ----- the worked example (§4.8) -------------------------------------------


def test_worked_example_config_map_is_exact() -> None:
    config = objects(mpijob())[("ConfigMap", "pi-config")]
    assert config["data"] == {
        "discover_hosts.sh": WORKED_DISCOVER_HOSTS,
        "hostfile": WORKED_HOSTFILE,
    }
    assert config["metadata"] == {
        "name": "pi-config",
        "namespace": "default",
        "labels": {"app": "pi"},
    }


def test_worked_example_launcher_env_is_exact() -> None:
    launcher = _launcher_pod(objects(mpijob()))
    assert _env(launcher["spec"]["containers"][0]) == WORKED_LAUNCHER_ENV


def test_worked_example_objects_in_operator_order() -> None:
    names = [
        (o["kind"], o["metadata"]["name"]) for o in expand_pods(MPI, MPI.default(_typed(mpijob())))
    ]
    assert names == [
        ("Service", "pi"),
        ("ConfigMap", "pi-config"),
        ("Secret", "pi-ssh"),
        ("Pod", "pi-worker-0"),
        ("Pod", "pi-worker-1"),
        ("Job", "pi-launcher"),
    ]


def test_headless_service() -> None:
    assert objects(mpijob())[("Service", "pi")] == {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "pi", "namespace": "default", "labels": {"app": "pi"}},
        "spec": {
            "clusterIP": "None",
            "selector": {
                "training.kubeflow.org/operator-name": "mpi-operator",
                "training.kubeflow.org/job-name": "pi",
            },
        },
    }


def test_ssh_secret_holds_placeholders_of_one_group() -> None:
    secret = objects(mpijob())[("Secret", "pi-ssh")]
    assert secret["type"] == "kubernetes.io/ssh-auth"
    assert secret["stringData"] == {
        "ssh-privatekey": "<generated:ecdsa-p521-private:default/pi-ssh>",
        "ssh-publickey": "<generated:ecdsa-p521-public:default/pi-ssh>",
    }
    parsed = [parse(v) for v in secret["stringData"].values()]
    assert {(p.kind, p.group) for p in parsed if p} == {
        ("ecdsa-p521-private", "default/pi-ssh"),
        ("ecdsa-p521-public", "default/pi-ssh"),
    }
    assert "data" not in secret


def test_worker_pod() -> None:
    doc = mpijob()
    worker_spec = doc["spec"]["mpiReplicaSpecs"]["Worker"]["template"]
    worker_spec["metadata"] = {"labels": {"team": "hpc"}, "annotations": {"a": "b"}}
    worker_spec["spec"]["dnsConfig"] = {"searches": ["corp.example"], "options": [{"name": "x"}]}
    pod = objects(doc)[("Pod", "pi-worker-1")]
    assert pod["metadata"] == {
        "name": "pi-worker-1",
        "namespace": "default",
        "labels": {
            "team": "hpc",
            "training.kubeflow.org/operator-name": "mpi-operator",
            "training.kubeflow.org/job-name": "pi",
            "training.kubeflow.org/job-role": "worker",
            "training.kubeflow.org/replica-index": "1",
        },
        "annotations": {"a": "b"},
    }
    spec = pod["spec"]
    assert (spec["hostname"], spec["subdomain"], spec["restartPolicy"]) == (
        "pi-worker-1",
        "pi",
        "Never",
    )
    assert spec["dnsConfig"] == {
        "searches": ["corp.example", "pi.default.svc.cluster.local"],
        "options": [{"name": "x"}],
    }
    assert "dnsPolicy" not in spec
    container = spec["containers"][0]
    assert container["command"] == ["/usr/sbin/sshd", "-De"]
    assert _env(container) == [("K_MPI_JOB_ROLE", "worker")]
    assert container["volumeMounts"] == [{"name": "ssh-auth", "mountPath": "/root/.ssh"}]
    assert spec["volumes"] == [
        {
            "name": "ssh-auth",
            "secret": {"secretName": "pi-ssh", "items": SSH_ITEMS, "defaultMode": 0o600},
        }
    ]


def test_worker_keeps_its_own_command_or_args() -> None:
    with_args = mpijob({"Launcher": _replica(1), "Worker": _replica(1, args=["-De"])})
    assert "command" not in objects(with_args)[("Pod", "pi-worker-0")]["spec"]["containers"][0]
    with_cmd = mpijob({"Launcher": _replica(1), "Worker": _replica(1, command=["sshd"])})
    assert objects(with_cmd)[("Pod", "pi-worker-0")]["spec"]["containers"][0]["command"] == ["sshd"]


def test_only_container_zero_is_touched() -> None:
    doc = mpijob()
    containers = doc["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"]
    containers.append({"name": "sidecar", "image": "busybox:1.36"})
    pod = objects(doc)[("Pod", "pi-worker-0")]
    assert pod["spec"]["containers"][1] == {"name": "sidecar", "image": "busybox:1.36"}


def test_host_network_pods_keep_cluster_dns() -> None:
    doc = mpijob()
    for rtype in ("Launcher", "Worker"):
        doc["spec"]["mpiReplicaSpecs"][rtype]["template"]["spec"]["hostNetwork"] = True
    objs = objects(doc)
    assert objs[("Pod", "pi-worker-0")]["spec"]["dnsPolicy"] == "ClusterFirstWithHostNet"
    assert _launcher_pod(objs)["spec"]["dnsPolicy"] == "ClusterFirstWithHostNet"


def test_launcher_job() -> None:
    doc = mpijob(
        runPolicy={"ttlSecondsAfterFinished": 60, "activeDeadlineSeconds": 3600, "backoffLimit": 2}
    )
    doc["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["metadata"] = {"labels": {"x": "y"}}
    job = objects(doc)[("Job", "pi-launcher")]
    assert job["metadata"] == {
        "name": "pi-launcher",
        "namespace": "default",
        "labels": {"app": "pi"},
    }
    assert [k for k in job["spec"]] == [
        "activeDeadlineSeconds",
        "backoffLimit",
        "template",
        "ttlSecondsAfterFinished",
    ]
    assert job["spec"]["activeDeadlineSeconds"] == 3600
    assert job["spec"]["backoffLimit"] == 2
    assert job["spec"]["ttlSecondsAfterFinished"] == 60
    assert "podReplacementPolicy" not in job["spec"]  # v0.8.0 sets none
    template = job["spec"]["template"]
    assert template["metadata"] == {
        "labels": {
            "x": "y",
            "training.kubeflow.org/operator-name": "mpi-operator",
            "training.kubeflow.org/job-name": "pi",
            "training.kubeflow.org/job-role": "launcher",
        }
    }
    spec = template["spec"]
    assert (spec["hostname"], spec["subdomain"], spec["restartPolicy"]) == (
        "pi-launcher",
        "pi",
        "OnFailure",
    )
    assert "dnsConfig" not in spec and "initContainers" not in spec
    assert spec["containers"][0]["command"] == ["mpirun", "pi"]
    assert spec["containers"][0]["volumeMounts"] == [
        {"name": "ssh-auth", "mountPath": "/root/.ssh"},
        {"name": "mpi-job-config", "mountPath": "/etc/mpi"},
    ]
    assert spec["volumes"][1] == {
        "name": "mpi-job-config",
        "configMap": {
            "name": "pi-config",
            "items": [
                {"key": "hostfile", "path": "hostfile", "mode": 0o444},
                {"key": "discover_hosts.sh", "path": "discover_hosts.sh", "mode": 0o555},
            ],
        },
    }


def test_launcher_restart_policy_never() -> None:
    doc = mpijob({"Launcher": {**_replica(1), "restartPolicy": "Never"}, "Worker": _replica(1)})
    assert _launcher_pod(objects(doc))["spec"]["restartPolicy"] == "Never"


# ----- implementations and runLauncherAsWorker ------------------------------


@pytest.mark.parametrize("implementation", ["Intel", "MPICH"])
def test_intel_and_mpich_hostfile(implementation: str) -> None:
    doc = mpijob(mpiImplementation=implementation, slotsPerWorker=4)
    assert objects(doc)[("ConfigMap", "pi-config")]["data"]["hostfile"] == (
        "pi-worker-0.pi.default.svc:4\npi-worker-1.pi.default.svc:4\n"
    )


def test_intel_launcher_env() -> None:
    launcher = _launcher_pod(objects(mpijob(mpiImplementation="Intel", slotsPerWorker=4)))
    assert _env(launcher["spec"]["containers"][0]) == [
        ("K_MPI_JOB_ROLE", "launcher"),
        ("I_MPI_HYDRA_HOST_FILE", "/etc/mpi/hostfile"),
        ("I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", "-o ConnectionAttempts=10"),
        ("I_MPI_PERHOST", "4"),
        ("NVIDIA_VISIBLE_DEVICES", ""),
        ("NVIDIA_DRIVER_CAPABILITIES", ""),
    ]


def test_mpich_launcher_env() -> None:
    launcher = _launcher_pod(objects(mpijob(mpiImplementation="MPICH")))
    assert _env(launcher["spec"]["containers"][0]) == [
        ("K_MPI_JOB_ROLE", "launcher"),
        ("HYDRA_HOST_FILE", "/etc/mpi/hostfile"),
        ("HYDRA_LAUNCH_EXTRA_ARGS", "-o ConnectionAttempts=10"),
        ("NVIDIA_VISIBLE_DEVICES", ""),
        ("NVIDIA_DRIVER_CAPABILITIES", ""),
    ]


def test_user_env_comes_first() -> None:
    doc = mpijob()
    launcher = doc["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    launcher["env"] = [{"name": "NCCL_DEBUG", "value": "INFO"}]
    env = _env(_launcher_pod(objects(doc))["spec"]["containers"][0])
    assert env[:2] == [("NCCL_DEBUG", "INFO"), ("K_MPI_JOB_ROLE", "launcher")]


def test_run_launcher_as_worker() -> None:
    objs = objects(mpijob(runLauncherAsWorker=True, slotsPerWorker=2))
    assert objs[("ConfigMap", "pi-config")]["data"] == {
        "discover_hosts.sh": (
            "#!/bin/sh\necho pi-launcher.pi.default.svc\n"
            "echo pi-worker-0.pi.default.svc\necho pi-worker-1.pi.default.svc\n"
        ),
        "hostfile": (
            "pi-launcher.pi.default.svc slots=2\n"
            "pi-worker-0.pi.default.svc slots=2\npi-worker-1.pi.default.svc slots=2\n"
        ),
    }
    assert objs[("Service", "pi")]["spec"]["publishNotReadyAddresses"] is True
    index = "training.kubeflow.org/replica-index"
    assert objs[("Pod", "pi-worker-0")]["metadata"]["labels"][index] == "1"
    assert objs[("Pod", "pi-worker-1")]["metadata"]["labels"][index] == "2"
    launcher = _launcher_pod(objs)
    assert launcher["metadata"]["labels"][index] == "0"
    names = [name for name, _ in _env(launcher["spec"]["containers"][0])]
    assert "NVIDIA_VISIBLE_DEVICES" not in names and names[-1] == "OMPI_MCA_orte_set_default_slots"


def test_run_launcher_as_worker_without_workers() -> None:
    objs = objects(mpijob({"Launcher": _replica(1)}, runLauncherAsWorker=True))
    assert objs[("ConfigMap", "pi-config")]["data"]["hostfile"] == (
        "pi-launcher.pi.default.svc slots=1\n"
    )
    assert not [key for key in objs if key[0] == "Pod"]


def test_discover_hosts_sorts_by_pod_name_like_the_operator() -> None:
    script = objects(mpijob({"Launcher": _replica(1), "Worker": _replica(11)}))[
        ("ConfigMap", "pi-config")
    ]["data"]["discover_hosts.sh"]
    hosts = [line.split()[1].split(".")[0] for line in script.splitlines()[1:]]
    assert hosts[:4] == ["pi-worker-0", "pi-worker-1", "pi-worker-10", "pi-worker-2"]


# ----- SSH mount ------------------------------------------------------------


def test_custom_ssh_mount_path_has_no_default_mode() -> None:
    objs = objects(mpijob(sshAuthMountPath="/home/mpiuser/.ssh"))
    for spec in (objs[("Pod", "pi-worker-0")]["spec"], _launcher_pod(objs)["spec"]):
        assert spec["volumes"][0] == {
            "name": "ssh-auth",
            "secret": {"secretName": "pi-ssh", "items": SSH_ITEMS},
        }
        mounts = spec["containers"][0]["volumeMounts"]
        assert mounts[0] == {"name": "ssh-auth", "mountPath": "/home/mpiuser/.ssh"}


def test_user_volumes_come_first() -> None:
    doc = mpijob()
    worker = doc["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
    worker["volumes"] = [{"name": "data", "emptyDir": {}}]
    worker["containers"][0]["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    spec = objects(doc)[("Pod", "pi-worker-0")]["spec"]
    assert [v["name"] for v in spec["volumes"]] == ["data", "ssh-auth"]
    assert [m["name"] for m in spec["containers"][0]["volumeMounts"]] == ["data", "ssh-auth"]


# ----- launcher creation and suspension -------------------------------------


def test_wait_for_workers_ready_init_container() -> None:
    doc = mpijob(launcherCreationPolicy="WaitForWorkersReady")
    doc["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["initContainers"] = [
        {"name": "fetch-data", "image": "busybox:1.36"}
    ]
    init = _launcher_pod(objects(doc))["spec"]["initContainers"]
    assert [c["name"] for c in init] == ["wait-for-workers", "fetch-data"]
    assert init[0] == {
        "name": "wait-for-workers",
        "image": "alpine:3.20.3",
        "imagePullPolicy": "IfNotPresent",
        "command": [
            "sh",
            "-c",
            'i=0; while [ "$i" -lt 2 ]; do host=pi-worker-$i.pi.default.svc; '
            'until getent hosts "$host" >/dev/null; do echo "waiting for $host"; sleep 2; done; '
            "i=$((i+1)); done",
        ],
        "resources": {
            "limits": {"cpu": "100m", "memory": "20Mi"},
            "requests": {"cpu": "50m", "memory": "10Mi"},
        },
    }


def test_at_startup_has_no_wait() -> None:
    assert "initContainers" not in _launcher_pod(objects(mpijob()))["spec"]


def test_suspended_job_has_no_workers_and_a_suspended_launcher() -> None:
    objs = objects(mpijob(runPolicy={"suspend": True}))
    assert sorted(objs) == [
        ("ConfigMap", "pi-config"),
        ("Job", "pi-launcher"),
        ("Secret", "pi-ssh"),
        ("Service", "pi"),
    ]
    assert objs[("Job", "pi-launcher")]["spec"]["suspend"] is True


# ----- defaults -------------------------------------------------------------


def test_defaults_are_explicit_on_the_operator_target() -> None:
    doc = mpijob({"Launcher": _replica(), "Worker": _replica(2)})
    manifest = MPI.operator_manifest(MPI.default(_typed(doc)))
    spec = manifest["spec"]
    assert manifest["metadata"] == {"name": "pi", "namespace": "default"}
    assert {k: v for k, v in spec.items() if k != "mpiReplicaSpecs"} == {
        "slotsPerWorker": 1,
        "runLauncherAsWorker": False,
        "runPolicy": {"cleanPodPolicy": "None"},
        "sshAuthMountPath": "/root/.ssh",
        "launcherCreationPolicy": "AtStartup",
        "mpiImplementation": "OpenMPI",
    }
    specs = spec["mpiReplicaSpecs"]
    assert (specs["Launcher"]["replicas"], specs["Launcher"]["restartPolicy"]) == (1, "OnFailure")
    assert (specs["Worker"]["replicas"], specs["Worker"]["restartPolicy"]) == (2, "Never")
    assert crd_schema.problems(manifest) == []


def test_user_values_survive_defaulting() -> None:
    doc = mpijob(
        slotsPerWorker=0,
        sshAuthMountPath="/home/u/.ssh",
        mpiImplementation="MPICH",
        launcherCreationPolicy="WaitForWorkersReady",
        runPolicy={"cleanPodPolicy": "All"},
    )
    job = MPI.default(_typed(doc))
    assert isinstance(job, MPIJob)
    spec = job.spec
    assert spec.slots_per_worker == 0
    assert spec.ssh_auth_mount_path == "/home/u/.ssh"
    assert spec.mpi_implementation == "MPICH"
    assert spec.launcher_creation_policy == "WaitForWorkersReady"
    assert spec.run_policy is not None and spec.run_policy.clean_pod_policy == "All"


def test_operator_target_validates_against_the_v2beta1_crd() -> None:
    doc = mpijob(
        runLauncherAsWorker=True,
        runPolicy={"suspend": False, "managedBy": "kubeflow.org/mpi-operator", "backoffLimit": 1},
    )
    rendering = run(parse_documents([doc]), target="operator")
    assert [m["apiVersion"] for m in rendering.manifests] == ["kubeflow.org/v2beta1"]
    assert crd_schema.problems(rendering.manifests[0]) == []


# ----- validation -----------------------------------------------------------


def test_launcher_is_required() -> None:
    assert messages(mpijob({"Worker": _replica(1)})) == [
        "error: spec.mpiReplicaSpecs.Launcher: an MPIJob needs a Launcher replica spec; "
        "fix: add mpiReplicaSpecs.Launcher: the pod that runs mpirun, replicas 1"
    ]


def test_launcher_replicas_must_be_one() -> None:
    assert messages(mpijob({"Launcher": _replica(2), "Worker": _replica(1)})) == [
        "error: spec.mpiReplicaSpecs.Launcher.replicas: an MPIJob has exactly one Launcher "
        "(got 2); fix: set Launcher.replicas to 1; scale out with Worker.replicas"
    ]


def test_worker_replicas_default_to_zero_which_is_invalid() -> None:
    assert messages(mpijob({"Launcher": _replica(1), "Worker": _replica()})) == [
        "error: spec.mpiReplicaSpecs.Worker.replicas: Worker.replicas must be at least 1 "
        "(an unset count defaults to 0) (got 0); fix: set Worker.replicas to the number of "
        "worker pods, or remove the Worker spec"
    ]


@pytest.mark.parametrize("policy", ["Always", "ExitCode"])
def test_restart_policy_never_or_on_failure_only(policy: str) -> None:
    doc = mpijob({"Launcher": _replica(1), "Worker": {**_replica(1), "restartPolicy": policy}})
    assert messages(doc) == [
        "error: spec.mpiReplicaSpecs.Worker.restartPolicy: the MPI Operator accepts only "
        f"restartPolicy Never or OnFailure (got {policy!r}); fix: use OnFailure (the Launcher "
        "default) or Never (the Worker default)"
    ]


def test_unknown_replica_type() -> None:
    assert messages(mpijob({"Launcher": _replica(1), "worker": _replica(1)})) == [
        "error: spec.mpiReplicaSpecs.worker: MPIJob has no replica type 'worker'; the MPI "
        "Operator ignores it (got 'worker'); fix: use Launcher or Worker, spelled exactly so"
    ]


def test_worker_hostname_must_be_a_dns1035_label() -> None:
    too_long = "a" * 55
    assert messages(mpijob(name=too_long)) == [
        f"error: metadata.name: the worker hostname '{too_long}-worker-1' has 64 characters; "
        f"a DNS-1035 label has at most 63 (got '{too_long}'); fix: shorten the job name to at "
        "most 54 characters"
    ]
    assert messages(mpijob(name="1pi")) == [
        "error: metadata.name: the worker hostname '1pi-worker-1' must be a DNS-1035 label: "
        "lowercase letters, digits and '-', starting with a letter (got '1pi'); fix: rename "
        "the job; its pods' hostnames are made from it"
    ]


def test_a_name_that_just_fits() -> None:
    assert messages(mpijob(name="a" * 54)) == []


def test_containers_and_images_are_required() -> None:
    doc = mpijob(
        {
            "Launcher": {"replicas": 1, "template": {"spec": {"containers": []}}},
            "Worker": {"replicas": 1, "template": {"spec": {"containers": [{"name": "w"}]}}},
        }
    )
    assert messages(doc) == [
        "error: spec.mpiReplicaSpecs.Launcher.template.spec.containers: every replica needs at "
        "least one container; fix: add the MPI container first: container[0] gets the SSH "
        "mount and env",
        "error: spec.mpiReplicaSpecs.Worker.template.spec.containers[0].image: every container "
        "needs an image; fix: set image to a pinned tag, e.g. 'repo/trainer:1.0'",
    ]


def test_managed_by() -> None:
    bad = mpijob(runPolicy={"managedBy": "kubeflow.org/training-operator"})
    assert messages(bad) == [
        "error: spec.runPolicy.managedBy: managedBy must be kubeflow.org/mpi-operator or "
        "kueue.x-k8s.io/multikueue (got 'kubeflow.org/training-operator'); fix: remove "
        "managedBy to let the MPI Operator manage the job"
    ]
    kueue = mpijob(runPolicy={"managedBy": "kueue.x-k8s.io/multikueue"})
    # Valid for the webhook; the pods target refuses it (tests/frameworks/test_edges.py).
    assert messages(kueue) == []


def test_template_restart_policy_warns() -> None:
    doc = mpijob()
    doc["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["restartPolicy"] = "Always"
    assert messages(doc) == [
        "warning: spec.mpiReplicaSpecs.Launcher.template.spec.restartPolicy: the replica's "
        "restartPolicy overrides the template's (got 'Always'); fix: set restartPolicy on the "
        "replica spec instead"
    ]
    assert _launcher_pod(objects(doc))["spec"]["restartPolicy"] == "OnFailure"


def test_bad_fields_are_reported_with_the_users_path() -> None:
    doc = mpijob(slotsPerWorker=-1, mpiImplementation="OpenMPI5", launcherCreationPolicy="Later")
    with pytest.raises(SpecError) as caught:
        run(parse_documents([doc]))
    assert sorted(f.path for f in caught.value.findings) == [
        "jobs[0].spec.launcherCreationPolicy",
        "jobs[0].spec.mpiImplementation",
        "jobs[0].spec.slotsPerWorker",
    ]


# ----- properties -----------------------------------------------------------


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    workers=st.integers(1, 12),
    slots=st.integers(0, 8),
    implementation=st.sampled_from(["OpenMPI", "Intel", "MPICH"]),
    as_worker=st.booleans(),
    wait=st.booleans(),
    target=st.sampled_from(["operator", "pods"]),
)
def test_any_valid_mpijob_renders_checked_and_deterministic(
    workers: int, slots: int, implementation: str, as_worker: bool, wait: bool, target: str
) -> None:
    doc = mpijob(
        {"Launcher": _replica(1, command=["mpirun", "pi"]), "Worker": _replica(workers)},
        slotsPerWorker=slots,
        mpiImplementation=implementation,
        runLauncherAsWorker=as_worker,
        launcherCreationPolicy="WaitForWorkersReady" if wait else "AtStartup",
    )
    first = run(parse_documents([doc]), target=target)  # type: ignore[arg-type]
    again = run(parse_documents([doc]), target=target)  # type: ignore[arg-type]
    assert dump_all(first.manifests) == dump_all(again.manifests)
    assert [f for f in first.findings if f.severity is Severity.ERROR] == []
    if target == "operator":
        assert [m["kind"] for m in first.manifests] == ["MPIJob"]
        return
    pods = [m for m in first.manifests if m["kind"] == "Pod"]
    assert len(pods) == workers
    config = next(m for m in first.manifests if m["kind"] == "ConfigMap")
    lines = config["data"]["hostfile"].splitlines()
    assert len(lines) == workers + as_worker
    assert all(
        line.endswith(f" slots={slots}" if implementation == "OpenMPI" else f":{slots}")
        for line in lines
    )
