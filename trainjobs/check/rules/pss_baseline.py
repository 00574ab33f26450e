"""Pod Security Standards, baseline level: the controls that prevent known privilege escalations.

One function per control of the Kubernetes "Pod Security Standards" page, checking
the fields it restricts in the pod and in every container (init and ephemeral ones
included). A pod that breaks one needs a namespace at the ``privileged`` level.
Training jobs meet some of them for a reason — RDMA needs ``IPC_LOCK``, NCCL over
the node's own network needs ``hostNetwork`` — so the messages say what the field
does for training, and a job silences a control it needs with
``trainjobs: {ignore: [pss.baseline.<control>]}``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from trainjobs.check.rules.model import RuleContext, Violation, version_at_least
from trainjobs.check.rules.sites import PodSite, containers, quoted

__all__ = [
    "BASELINE_CAPABILITIES",
    "apparmor",
    "capabilities",
    "host_namespaces",
    "host_path",
    "host_ports",
    "host_process",
    "privileged",
    "proc_mount",
    "seccomp",
    "selinux",
    "sysctls",
]

BASELINE_CAPABILITIES = frozenset(
    {
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    }
)
"""Capabilities a baseline pod may add: the container runtime's default set."""

# Why training pods ask for capabilities beyond the baseline set.
_CAPABILITY_USES = {
    "IPC_LOCK": "pins memory for RDMA (InfiniBand, RoCE, GPUDirect)",
    "SYS_RESOURCE": "raises memory-lock limits for RDMA",
    "SYS_PTRACE": "lets profilers and debuggers attach",
    "SYS_ADMIN": "is close to root on the node",
    "NET_ADMIN": "changes the node's network configuration",
    "NET_RAW": "opens raw sockets",
}

# Sysctls the baseline level allows, by the Kubernetes version that added them.
_SAFE_SYSCTLS: tuple[tuple[str, frozenset[str]], ...] = (
    (
        "1.0",
        frozenset(
            {
                "kernel.shm_rmid_forced",
                "net.ipv4.ip_local_port_range",
                "net.ipv4.tcp_syncookies",
                "net.ipv4.ping_group_range",
                "net.ipv4.ip_unprivileged_port_start",
            }
        ),
    ),
    ("1.27", frozenset({"net.ipv4.ip_local_reserved_ports"})),
    (
        "1.29",
        frozenset(
            {
                "net.ipv4.tcp_keepalive_time",
                "net.ipv4.tcp_fin_timeout",
                "net.ipv4.tcp_keepalive_intvl",
                "net.ipv4.tcp_keepalive_probes",
            }
        ),
    ),
    ("1.32", frozenset({"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"})),
)

_SELINUX_TYPES: tuple[tuple[str, frozenset[str]], ...] = (
    ("1.0", frozenset({"", "container_t", "container_init_t", "container_kvm_t"})),
    ("1.31", frozenset({"container_engine_t"})),
)

_APPARMOR_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/"

_PRIVILEGED_HINT = (
    "remove it; if the job needs it, run the job in a namespace labelled "
    "pod-security.kubernetes.io/enforce=privileged and add `trainjobs: {{ignore: [{code}]}}`"
)


def _hint(control: str) -> str:
    return _PRIVILEGED_HINT.format(code=f"pss.baseline.{control}")


def _security_context(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    context = obj.get("securityContext")
    return context if isinstance(context, Mapping) else {}


@cache
def _allowed(table: tuple[tuple[str, frozenset[str]], ...], version: str) -> frozenset[str]:
    return frozenset().union(*(names for since, names in table if version_at_least(version, since)))


def host_process(site: PodSite, ctx: RuleContext) -> Iterator[Violation]:
    """Windows HostProcess containers have privileged access to the Windows node."""
    places = [("spec", _security_context(site.spec))]
    places += [(path, _security_context(c)) for path, c in containers(site.spec)]
    for path, context in places:
        windows = context.get("windowsOptions")
        if isinstance(windows, Mapping) and windows.get("hostProcess") is True:
            yield Violation(
                site.at(f"{path}.securityContext.windowsOptions.hostProcess"),
                "a HostProcess container runs with the Windows node's privileges",
                True,
                _hint("host_process"),
            )


def host_namespaces(site: PodSite, ctx: RuleContext) -> Iterator[Violation]:
    """Sharing the node's network, process or IPC namespace."""
    why = {
        "hostNetwork": "shares the node's network (NCCL over RoCE/InfiniBand without an "
        "RDMA-aware network plugin does this)",
        "hostPID": "sees and signals every process on the node",
        "hostIPC": "shares the node's shared memory and semaphores",
    }
    for field, what in why.items():
        if site.spec.get(field) is True:
            yield Violation(
                site.at(f"spec.{field}"), f"{field}: true {what}", True, _hint("host_namespaces")
            )


def privileged(site: PodSite, ctx: RuleContext) -> Iterator[Violation]:
    """Privileged containers: every device and capability of the node."""
    for path, container in containers(site.spec):
        if _security_context(container).get("privileged") is True:
            yield Violation(
                site.at(f"{path}.securityContext.privileged"),
                f"container {container.get('name')!r} is privileged: it gets every device and "
                "capability of the node (GPUs are given by the device plugin, not by this)",
                True,
                _hint("privileged"),
            )


def capabilities(site: PodSite, ctx: RuleContext) -> Iterator[Violation]:
    """Capabilities added beyond the container runtime's default set."""
    for path, container in containers(site.spec):
        caps = _security_context(container).get("capabilities")
        added = caps.get("add") if isinstance(caps, Mapping) else None
        if not isinstance(added, list):
            continue
        for index, capability in enumerate(added):
            if capability in BASELINE_CAPABILITIES:
                continue
            use = _CAPABILITY_USES.get(str(capability))
            what = f"capability {capability} ({use})" if use else f"capability {capability}"
            yield Violation(
                site.at(f"{path}.securityContext.capabilities.add[{index}]"),
                f"container {container.get('name')!r} adds {what}, beyond the baseline set",
                capability,
                _hint("capabilities"),
            )


def host_path(site: PodSite, ctx: RuleContext) -> Iterator[Violation]:
    """hostPath volumes: the node's own files."""
    volumes = site.spec.get("volumes")
    for index, volume in enumerate(volumes if isinstance(volumes, list) else []):
        if isinstance(volume, Mapping) and volume.get("hostPath") is not None:
            source = volume["hostPath"]
            value = source.get("path") if isinstance(source, Mapping) else source
            yield Violation(
                site.at(f"spec.volumes[{index}].hostPath"),
                f"volume {volume.get('name')!r} mounts a path of the node",
                value,
                "keep data and checkpoints on a PersistentVolumeClaim (or an NFS backend); "
                + _hint("host_path"),
            )


def host_ports(site: PodSite, ctx: RuleContext) -> Iterator[Violation]:
    """Ports bound on the node itself."""
    for path, container in containers(site.spec):
        ports = container.get("ports")
        for index, port in enumerate(ports if isinstance(ports, list) else []):
            if isinstance(port, Mapping) and port.get("hostPort") not in (None, 0):
                yield Violation(
                    site.at(f"{path}.ports[{index}].hostPort"),
                    f"container {container.get('name')!r} binds a port on the node; two "
                    "replicas on one node would collide",
                    port["hostPort"],
                    "remove hostPort: replicas reach each other through their Services; "
                    + _hint("host_ports"),
                )


def apparmor(site: PodSite, ctx: RuleContext) -> Iterator[Violation]:
    """Turning off or replacing the runtime's default AppArmor profile."""
    places = [("spec", _security_context(site.spec))]
    places += [(path, _security_context(c)) for path, c in containers(site.spec)]
    for path, context in places:
        profile = context.get("appArmorProfile")
        kind = profile.get("type") if isinstance(profile, Mapping) else None
        if kind is not None and kind not in ("RuntimeDefault", "Localhost"):
            yield Violation(
                site.at(f"{path}.securityContext.appArmorProfile.type"),
                "the AppArmor profile is turned off",
                kind,
                "use RuntimeDefault or a Localhost profile; " + _hint("apparmor"),
            )
    annotations = site.metadata.get("annotations")
    for key, value in (annotations if isinstance(annotations, Mapping) else {}).items():
        if not str(key).startswith(_APPARMOR_ANNOTATION):
            continue
        if value in ("", "runtime/default") or str(value).startswith("localhost/"):
            continue
        yield Violation(
            site.at(quoted("metadata", "annotations", str(key))),
            "the AppArmor profile is turned off",
            value,
            "use runtime/default or localhost/<profile>; " + _hint("apparmor"),
        )


def selinux(site: PodSite, ctx: RuleContext) -> Iterator[Violation]:
    """Custom SELinux users, roles or types."""
    types = _allowed(_SELINUX_TYPES, ctx.k8s_version)
    places = [("spec", _security_context(site.spec))]
    places += [(path, _security_context(c)) for path, c in containers(site.spec)]
    for path, context in places:
        options = context.get("seLinuxOptions")
        if not isinstance(options, Mapping):
            continue
        base = f"{path}.securityContext.seLinuxOptions"
        if options.get("type", "") not in types:
            yield Violation(
                site.at(f"{base}.type"),
                "a custom SELinux type is set",
                options["type"],
                f"use one of {', '.join(sorted(t for t in types if t))} or none; "
                + _hint("selinux"),
            )
        for field in ("user", "role"):
            if options.get(field, "") != "":
                yield Violation(
                    site.at(f"{base}.{field}"),
                    f"a custom SELinux {field} is set",
                    options[field],
                    _hint("selinux"),
                )


def proc_mount(site: PodSite, ctx: RuleContext) -> Iterator[Violation]:
    """Unmasked /proc."""
    for path, container in containers(site.spec):
        mount = _security_context(container).get("procMount")
        if mount is not None and mount != "Default":
            yield Violation(
                site.at(f"{path}.securityContext.procMount"),
                f"container {container.get('name')!r} unmasks /proc",
                mount,
                "remove procMount (Default); " + _hint("proc_mount"),
            )


def seccomp(site: PodSite, ctx: RuleContext) -> Iterator[Violation]:
    """Turning seccomp off."""
    places = [("spec", _security_context(site.spec))]
    places += [(path, _security_context(c)) for path, c in containers(site.spec)]
    for path, context in places:
        profile = context.get("seccompProfile")
        if isinstance(profile, Mapping) and profile.get("type") == "Unconfined":
            yield Violation(
                site.at(f"{path}.securityContext.seccompProfile.type"),
                "seccomp is turned off",
                "Unconfined",
                "use RuntimeDefault; " + _hint("seccomp"),
            )


def sysctls(site: PodSite, ctx: RuleContext) -> Iterator[Violation]:
    """Kernel parameters outside the safe, namespaced set."""
    allowed = _allowed(_SAFE_SYSCTLS, ctx.k8s_version)
    entries = _security_context(site.spec).get("sysctls")
    for index, entry in enumerate(entries if isinstance(entries, list) else []):
        name = entry.get("name") if isinstance(entry, Mapping) else entry
        if name not in allowed:
            yield Violation(
                site.at(f"spec.securityContext.sysctls[{index}].name"),
                f"sysctl {name} is not in the safe set of Kubernetes {ctx.k8s_version}",
                name,
                "set it on the nodes (a node pool's configuration) instead; " + _hint("sysctls"),
            )
