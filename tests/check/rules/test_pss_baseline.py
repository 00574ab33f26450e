"""Pod Security Standards, baseline: each control's restricted fields and allowed values."""

from __future__ import annotations

import pytest

from tests.check.rules.helpers import container, paths, pod, violations, workload


def test_a_default_pod_passes_every_baseline_control() -> None:
    for control in (
        "host_process",
        "host_namespaces",
        "privileged",
        "capabilities",
        "host_path",
        "host_ports",
        "apparmor",
        "selinux",
        "proc_mount",
        "seccomp",
        "sysctls",
    ):
        assert violations(f"pss.baseline.{control}", pod()) == [], control


def test_host_network_names_the_training_use_and_the_exemption() -> None:
    assert violations("pss.baseline.host_namespaces", pod(hostNetwork=True)) == [
        "spec.hostNetwork: hostNetwork: true shares the node's network (NCCL over "
        "RoCE/InfiniBand without an RDMA-aware network plugin does this) (got True); fix: "
        "remove it; if the job needs it, run the job in a namespace labelled "
        "pod-security.kubernetes.io/enforce=privileged and add "
        "`trainjobs: {ignore: [pss.baseline.host_namespaces]}`"
    ]


def test_host_pid_and_ipc_but_not_false() -> None:
    manifest = pod(hostPID=True, hostIPC=True, hostNetwork=False)
    assert paths("pss.baseline.host_namespaces", manifest) == ["spec.hostPID", "spec.hostIPC"]


def test_ipc_lock_for_rdma_is_named() -> None:
    rdma = container(securityContext={"capabilities": {"add": ["CHOWN", "IPC_LOCK"]}})
    assert violations("pss.baseline.capabilities", pod(rdma)) == [
        "spec.containers[0].securityContext.capabilities.add[1]: container 'trainer' adds "
        "capability IPC_LOCK (pins memory for RDMA (InfiniBand, RoCE, GPUDirect)), beyond the "
        "baseline set (got 'IPC_LOCK'); fix: remove it; if the job needs it, run the job in a "
        "namespace labelled pod-security.kubernetes.io/enforce=privileged and add "
        "`trainjobs: {ignore: [pss.baseline.capabilities]}`"
    ]


@pytest.mark.parametrize("capability", ["AUDIT_WRITE", "NET_BIND_SERVICE", "SYS_CHROOT", "KILL"])
def test_the_default_capability_set_may_be_added(capability: str) -> None:
    c = container(securityContext={"capabilities": {"add": [capability]}})
    assert violations("pss.baseline.capabilities", pod(c)) == []


def test_privileged_in_init_and_ephemeral_containers_too() -> None:
    manifest = pod(
        container(),
        initContainers=[container("init", securityContext={"privileged": True})],
        ephemeralContainers=[container("debug", securityContext={"privileged": True})],
    )
    assert paths("pss.baseline.privileged", manifest) == [
        "spec.initContainers[0].securityContext.privileged",
        "spec.ephemeralContainers[0].securityContext.privileged",
    ]


def test_host_path_volume_value_is_the_node_path() -> None:
    manifest = pod(volumes=[{"name": "data", "hostPath": {"path": "/mnt/data"}}])
    (line,) = violations("pss.baseline.host_path", manifest)
    assert line.startswith(
        "spec.volumes[0].hostPath: volume 'data' mounts a path of the node (got '/mnt/data'); "
        "fix: keep data and checkpoints on a PersistentVolumeClaim (or an NFS backend); "
    )


def test_host_ports_other_than_zero() -> None:
    c = container(
        ports=[{"containerPort": 2222, "hostPort": 0}, {"containerPort": 1, "hostPort": 8}]
    )
    assert paths("pss.baseline.host_ports", pod(c)) == ["spec.containers[0].ports[1].hostPort"]


def test_apparmor_fields_and_annotations() -> None:
    manifest = pod(
        container(securityContext={"appArmorProfile": {"type": "Unconfined"}}),
        securityContext={"appArmorProfile": {"type": "Localhost", "localhostProfile": "x"}},
    )
    manifest["metadata"]["annotations"] = {
        "container.apparmor.security.beta.kubernetes.io/trainer": "unconfined",
        "container.apparmor.security.beta.kubernetes.io/other": "localhost/mine",
    }
    assert paths("pss.baseline.apparmor", manifest) == [
        "spec.containers[0].securityContext.appArmorProfile.type",
        "metadata.annotations['container.apparmor.security.beta.kubernetes.io/trainer']",
    ]


def test_selinux_types_grow_with_the_version() -> None:
    engine = pod(securityContext={"seLinuxOptions": {"type": "container_engine_t"}})
    assert paths("pss.baseline.selinux", engine, version="1.30") == [
        "spec.securityContext.seLinuxOptions.type"
    ]
    assert paths("pss.baseline.selinux", engine, version="1.31") == []
    custom = pod(container(securityContext={"seLinuxOptions": {"user": "root", "level": "s0"}}))
    assert paths("pss.baseline.selinux", custom) == [
        "spec.containers[0].securityContext.seLinuxOptions.user"
    ]


def test_proc_mount_and_seccomp() -> None:
    manifest = pod(
        container(
            securityContext={"procMount": "Unmasked", "seccompProfile": {"type": "Unconfined"}}
        ),
        securityContext={"seccompProfile": {"type": "RuntimeDefault"}},
    )
    assert paths("pss.baseline.proc_mount", manifest) == [
        "spec.containers[0].securityContext.procMount"
    ]
    assert paths("pss.baseline.seccomp", manifest) == [
        "spec.containers[0].securityContext.seccompProfile.type"
    ]


def test_sysctls_allowed_by_version() -> None:
    manifest = pod(
        securityContext={
            "sysctls": [
                {"name": "net.ipv4.ip_local_port_range", "value": "1024 65535"},
                {"name": "net.ipv4.tcp_keepalive_time", "value": "60"},
                {"name": "net.core.somaxconn", "value": "1024"},
            ]
        }
    )
    assert paths("pss.baseline.sysctls", manifest, version="1.28") == [
        "spec.securityContext.sysctls[1].name",
        "spec.securityContext.sysctls[2].name",
    ]
    assert violations("pss.baseline.sysctls", manifest, version="1.29") == [
        "spec.securityContext.sysctls[2].name: sysctl net.core.somaxconn is not in the safe set "
        "of Kubernetes 1.29 (got 'net.core.somaxconn'); fix: set it on the nodes (a node pool's "
        "configuration) instead; remove it; if the job needs it, run the job in a namespace "
        "labelled pod-security.kubernetes.io/enforce=privileged and add "
        "`trainjobs: {ignore: [pss.baseline.sysctls]}`"
    ]


def test_host_process_pod_and_container() -> None:
    hp = {"windowsOptions": {"hostProcess": True}}
    manifest = pod(container(securityContext=hp), securityContext=hp)
    assert paths("pss.baseline.host_process", manifest) == [
        "spec.securityContext.windowsOptions.hostProcess",
        "spec.containers[0].securityContext.windowsOptions.hostProcess",
    ]


def test_workload_templates_are_checked_at_their_path() -> None:
    deployment = workload("apps/v1", "Deployment", hostNetwork=True)
    assert paths("pss.baseline.host_namespaces", deployment) == ["spec.template.spec.hostNetwork"]
