"""Every check rule, listed once: ``trainjobs check --list-rules``, the README's table and
the policy pack's policies all come from ``RULES``.

Adding a rule: write its function (one manifest → violations, or one pod site →
violations for a rule about pods) in a module of this package and add it here,
as a ``Rule`` or with ``_pods``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from trainjobs.check.rules import lifecycle, pss_baseline, pss_restricted, resources
from trainjobs.check.rules.model import silenced
from trainjobs.check.rules.rule import Rule
from trainjobs.check.rules.sites import PodCheck, per_pod
from trainjobs.errors import Severity
from trainjobs.spec.stack import Profile

__all__ = ["RULES", "RuleRegistry", "rules_table"]

_ERROR, _WARNING, _ADVICE = Severity.ERROR, Severity.WARNING, Severity.ADVICE


def _pods(
    code: str,
    severity: Severity,
    title: str,
    docs: str,
    check: PodCheck,
    level: Profile | None = None,
) -> Rule:
    """A rule over every pod site of an object."""
    return Rule(code, severity, title, docs, per_pod(check), level, pod_check=check)


def _baseline(control: str, title: str, docs: str) -> Rule:
    check = getattr(pss_baseline, control)
    return _pods(f"pss.baseline.{control}", _ERROR, title, docs, check, "baseline")


def _restricted(control: str, title: str, docs: str) -> Rule:
    check = getattr(pss_restricted, control)
    return _pods(f"pss.restricted.{control}", _ERROR, title, docs, check, "restricted")


class RuleRegistry:
    """The rules by code, in documentation order."""

    def __init__(self, rules: Sequence[Rule]) -> None:
        self._rules = tuple(rules)
        self._by_code = {rule.code: rule for rule in self._rules}
        if len(self._by_code) != len(self._rules):
            raise ValueError("two check rules share a code")

    def __iter__(self) -> Iterator[Rule]:
        return iter(self._rules)

    def __len__(self) -> int:
        return len(self._rules)

    def get(self, code: str) -> Rule | None:
        return self._by_code.get(code)

    def codes(self) -> list[str]:
        return list(self._by_code)

    def matches(self, entry: str) -> bool:
        """Whether an ``ignore`` entry names a rule or a group of rules (``pss.baseline``)."""
        return any(silenced(code, [entry]) for code in self._by_code)


RULES = RuleRegistry(
    [
        _baseline(
            "host_process",
            "no Windows HostProcess containers",
            "spec.securityContext.windowsOptions.hostProcess and the containers' must be "
            "unset or false.",
        ),
        _baseline(
            "host_namespaces",
            "no hostNetwork, hostPID or hostIPC",
            "Sharing the node's namespaces must be off. Jobs that run NCCL over the node's "
            "own network (hostNetwork) need the privileged level: say so in their namespace "
            "and silence the rule for them.",
        ),
        _baseline(
            "privileged",
            "no privileged containers",
            "securityContext.privileged must be unset or false in every container; GPUs come "
            "from the device plugin (resources.limits), not from privileged mode.",
        ),
        _baseline(
            "capabilities",
            "no capabilities beyond the default set",
            "capabilities.add may list only AUDIT_WRITE, CHOWN, DAC_OVERRIDE, FOWNER, FSETID, "
            "KILL, MKNOD, NET_BIND_SERVICE, SETFCAP, SETGID, SETPCAP, SETUID, SYS_CHROOT. RDMA "
            "jobs add IPC_LOCK to pin memory: such a job needs the privileged level.",
        ),
        _baseline(
            "host_path",
            "no hostPath volumes",
            "Volumes must not mount the node's files; keep datasets and checkpoints on a "
            "PersistentVolumeClaim or an NFS backend.",
        ),
        _baseline(
            "host_ports",
            "no host ports",
            "containers[*].ports[*].hostPort must be unset or 0; replicas reach each other "
            "through their Services.",
        ),
        _baseline(
            "apparmor",
            "AppArmor not turned off",
            "appArmorProfile.type must be RuntimeDefault or Localhost, and the "
            "container.apparmor.security.beta.kubernetes.io/* annotations runtime/default or "
            "localhost/*.",
        ),
        _baseline(
            "selinux",
            "no custom SELinux options",
            "seLinuxOptions.type must be container_t, container_init_t, container_kvm_t (or "
            "container_engine_t from Kubernetes 1.31); user and role must be unset.",
        ),
        _baseline(
            "proc_mount",
            "/proc stays masked",
            "securityContext.procMount must be unset or Default.",
        ),
        _baseline(
            "seccomp",
            "seccomp not turned off",
            "seccompProfile.type must not be Unconfined, in the pod or any container.",
        ),
        _baseline(
            "sysctls",
            "only safe sysctls",
            "spec.securityContext.sysctls may set only the namespaced, safe set of the "
            "stack's Kubernetes version (kernel.shm_rmid_forced, net.ipv4.ip_local_port_range, "
            "net.ipv4.tcp_syncookies, net.ipv4.ping_group_range, "
            "net.ipv4.ip_unprivileged_port_start; ip_local_reserved_ports from 1.27; the TCP "
            "keepalive and fin_timeout ones from 1.29; tcp_rmem and tcp_wmem from 1.32).",
        ),
        _restricted(
            "volume_types",
            "only core volume types",
            "Volumes may be configMap, csi, downwardAPI, emptyDir, ephemeral, "
            "persistentVolumeClaim, projected or secret; an NFS share is mounted through a "
            "PersistentVolume.",
        ),
        _restricted(
            "privilege_escalation",
            "allowPrivilegeEscalation: false",
            "Every container of a Linux pod sets securityContext.allowPrivilegeEscalation: false.",
        ),
        _restricted(
            "run_as_non_root",
            "runAsNonRoot: true",
            "The pod (or every container) sets securityContext.runAsNonRoot: true, and none "
            "sets it false.",
        ),
        _restricted(
            "run_as_user",
            "not user 0",
            "runAsUser must not be 0 in the pod or any container.",
        ),
        _restricted(
            "seccomp",
            "a seccomp profile is set",
            "The pod sets seccompProfile.type RuntimeDefault or Localhost, or every container "
            "does.",
        ),
        _restricted(
            "capabilities",
            "drop ALL capabilities",
            "Every container of a Linux pod drops ALL capabilities and adds back at most "
            "NET_BIND_SERVICE.",
        ),
        _pods(
            "image.unpinned",
            _WARNING,
            "images pinned",
            "Every container image has a version tag other than latest, or a digest. A moving "
            "tag makes a render mean different code on different days, and replicas pulled at "
            "different times can run different code in one job.",
            resources.unpinned_images,
        ),
        _pods(
            "gpu.limits",
            _ERROR,
            "GPU requests equal limits",
            "A request for a GPU or other device (nvidia.com/gpu, amd.com/gpu, any extended "
            "resource) needs a limit, and the two must be equal: devices are not shared, and "
            "Kubernetes refuses the pod otherwise. A limit alone is enough.",
            resources.device_limits,
        ),
        _pods(
            "resources.requests",
            _WARNING,
            "cpu and memory requested",
            "Every container requests cpu and memory (a limit counts as a request). Without "
            "them the scheduler may pack a replica onto a full node and it is evicted first "
            "under memory pressure; one lost replica stalls a synchronous job.",
            resources.requests,
        ),
        _pods(
            "restart.framework",
            _ERROR,
            "restartPolicy accepted by the operator",
            "A replica's restartPolicy is one its operator accepts: Always, OnFailure, Never "
            "or ExitCode for the Training Operator kinds; Never or OnFailure for MPIJob "
            "v2beta1.",
            lifecycle.restart_framework,
        ),
        _pods(
            "restart.workload",
            _ERROR,
            "restartPolicy accepted by the controller",
            "A batch Job's or CronJob's pods restart OnFailure or Never; a Deployment's, "
            "StatefulSet's, DaemonSet's or ReplicaSet's Always.",
            lifecycle.restart_workload,
        ),
        _pods(
            "restart.always",
            _WARNING,
            "training replicas can finish",
            "A training replica (a job's Pod, or a replica of its custom resource) does not "
            "use restartPolicy Always: the container would start again after exiting 0, so "
            "the replica never completes and the job never succeeds.",
            lifecycle.restart_always,
        ),
        Rule(
            "ttl.unset",
            _ADVICE,
            "finished jobs are cleaned up",
            "A job's custom resource (runPolicy.ttlSecondsAfterFinished) or batch Job "
            "(ttlSecondsAfterFinished) says when the cluster deletes it once finished. With "
            "Pulumi there is a catch: once the cluster has deleted it, `pulumi refresh` "
            "forgets it and the next `pulumi up` creates it again and trains again (see "
            "components/register.py) — so the better way is to remove finished jobs from the "
            "stack, and silence this advice.",
            lifecycle.ttl_unset,
        ),
    ]
)
"""Every rule, in the order the README lists them."""


def rules_table(rules: RuleRegistry = RULES) -> str:
    """The rules as a Markdown table: code, severity, Pod Security level, what it checks."""
    lines = ["| rule | severity | profile | checks |", "| --- | --- | --- | --- |"]
    for rule in rules:
        level = rule.level or "any"
        lines.append(
            f"| `{rule.code}` | {rule.severity.value} | {level} | {rule.title}: {rule.docs} |"
        )
    return "\n".join(lines) + "\n"
