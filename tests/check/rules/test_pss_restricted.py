"""Pod Security Standards, restricted: the hardening controls beyond baseline."""

from __future__ import annotations

import copy
from typing import Any

from tests.check.rules.helpers import container, paths, pod, violations
from trainjobs.platform import redis

HARDENED = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
}


def _hardened_pod(**spec: Any) -> dict[str, Any]:
    """A pod that passes every restricted control; a test may edit it (a deep copy)."""
    return pod(
        container(securityContext=copy.deepcopy(HARDENED)),
        securityContext={"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
        **spec,
    )


RESTRICTED = [
    "pss.restricted.volume_types",
    "pss.restricted.privilege_escalation",
    "pss.restricted.run_as_non_root",
    "pss.restricted.run_as_user",
    "pss.restricted.seccomp",
    "pss.restricted.capabilities",
]


def test_a_hardened_pod_passes() -> None:
    for code in RESTRICTED:
        assert violations(code, _hardened_pod()) == [], code


def test_the_redis_backend_meets_the_restricted_level() -> None:
    manifests = redis.KIND.manifests(
        redis.RedisBackend.model_validate({"metadata": {"name": "r"}, "spec": {"password": True}})
    )
    for manifest in manifests:
        for code in RESTRICTED:
            assert violations(code, manifest) == [], (code, manifest["kind"])


def test_a_default_pod_breaks_each_control_with_exact_messages() -> None:
    lines = [line for code in RESTRICTED for line in violations(code, pod())]
    assert lines == [
        "spec.containers[0].securityContext.allowPrivilegeEscalation: container 'trainer' does "
        "not set allowPrivilegeEscalation: false; fix: set "
        "securityContext.allowPrivilegeEscalation: false, or add "
        "`trainjobs: {ignore: [pss.restricted.privilege_escalation]}` if the namespace is "
        "baseline",
        "spec.containers[0].securityContext.runAsNonRoot: container 'trainer' may run as root; "
        "fix: set spec.securityContext.runAsNonRoot: true with a non-zero runAsUser the image "
        "can run as, or add `trainjobs: {ignore: [pss.restricted.run_as_non_root]}` if the "
        "namespace is baseline",
        "spec.containers[0].securityContext.seccompProfile.type: container 'trainer' has no "
        "seccomp profile and the pod sets none; fix: set "
        "spec.securityContext.seccompProfile.type: RuntimeDefault, or add "
        "`trainjobs: {ignore: [pss.restricted.seccomp]}` if the namespace is baseline",
        "spec.containers[0].securityContext.capabilities.drop: container 'trainer' does not "
        "drop ALL capabilities; fix: set securityContext.capabilities.drop: [ALL], or add "
        "`trainjobs: {ignore: [pss.restricted.capabilities]}` if the namespace is baseline",
    ]


def test_nfs_and_host_path_volumes_are_not_core_types() -> None:
    manifest = _hardened_pod(
        volumes=[
            {"name": "data", "nfs": {"server": "nfs", "path": "/"}},
            {"name": "ckpt", "persistentVolumeClaim": {"claimName": "c"}},
            {"name": "scratch", "emptyDir": {}},
        ]
    )
    assert violations("pss.restricted.volume_types", manifest) == [
        "spec.volumes[0].nfs: volume 'data' is a nfs volume (got 'nfs'); fix: mount it through "
        "a PersistentVolume and a persistentVolumeClaim volume, or add "
        "`trainjobs: {ignore: [pss.restricted.volume_types]}` if the namespace is baseline"
    ]


def test_run_as_non_root_false_anywhere_and_user_zero() -> None:
    manifest = _hardened_pod()
    manifest["spec"]["containers"][0]["securityContext"] = {
        **HARDENED,
        "runAsNonRoot": False,
        "runAsUser": 0,
    }
    assert paths("pss.restricted.run_as_non_root", manifest) == [
        "spec.containers[0].securityContext.runAsNonRoot"
    ]
    assert paths("pss.restricted.run_as_user", manifest) == [
        "spec.containers[0].securityContext.runAsUser"
    ]
    manifest["spec"]["securityContext"]["runAsNonRoot"] = False
    assert paths("pss.restricted.run_as_non_root", manifest) == [
        "spec.securityContext.runAsNonRoot",
        "spec.containers[0].securityContext.runAsNonRoot",
    ]


def test_seccomp_on_every_container_instead_of_the_pod() -> None:
    runtime = {**HARDENED, "seccompProfile": {"type": "RuntimeDefault"}}
    manifest = pod(
        container(securityContext=runtime),
        container("other", securityContext=HARDENED),
        securityContext={"runAsNonRoot": True},
    )
    assert paths("pss.restricted.seccomp", manifest) == [
        "spec.containers[1].securityContext.seccompProfile.type"
    ]


def test_capabilities_may_add_back_only_net_bind_service() -> None:
    caps = {"drop": ["ALL"], "add": ["NET_BIND_SERVICE", "IPC_LOCK"]}
    manifest = _hardened_pod()
    manifest["spec"]["containers"][0]["securityContext"]["capabilities"] = caps
    assert paths("pss.restricted.capabilities", manifest) == [
        "spec.containers[0].securityContext.capabilities.add[1]"
    ]


def test_windows_pods_skip_the_linux_only_controls() -> None:
    manifest = pod(os={"name": "windows"}, securityContext={"runAsNonRoot": True})
    for code in ("privilege_escalation", "seccomp", "capabilities"):
        assert violations(f"pss.restricted.{code}", manifest) == [], code


def test_a_container_setting_unconfined_is_the_baseline_rules_finding_alone() -> None:
    """PodSecurity refuses a container's Unconfined even under a good pod-level profile;
    pss.baseline.seccomp (which runs at restricted too) reports it, once."""
    manifest = _hardened_pod()
    manifest["spec"]["containers"][0]["securityContext"]["seccompProfile"] = {"type": "Unconfined"}
    assert violations("pss.restricted.seccomp", manifest) == []
    assert paths("pss.baseline.seccomp", manifest) == [
        "spec.containers[0].securityContext.seccompProfile.type"
    ]


def test_an_unconfined_pod_leaves_every_container_without_its_own_profile_uncovered() -> None:
    runtime = {**HARDENED, "seccompProfile": {"type": "Localhost", "localhostProfile": "p"}}
    manifest = pod(
        container(securityContext=HARDENED),
        container("own", securityContext=runtime),
        securityContext={"runAsNonRoot": True, "seccompProfile": {"type": "Unconfined"}},
    )
    assert violations("pss.restricted.seccomp", manifest) == [
        "spec.containers[0].securityContext.seccompProfile.type: container 'trainer' has no "
        "seccomp profile and the pod sets 'Unconfined'; fix: set "
        "spec.securityContext.seccompProfile.type: RuntimeDefault, or add "
        "`trainjobs: {ignore: [pss.restricted.seccomp]}` if the namespace is baseline"
    ]
    assert paths("pss.baseline.seccomp", manifest) == ["spec.securityContext.seccompProfile.type"]
