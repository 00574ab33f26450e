"""Loopback addresses for a job's replicas, and the rewrite of every name that points at one.

On a cluster each replica is a pod with an address of its own, reached through
a Service (``mnist-worker-1``, ``mnist-worker-1.kubeflow.svc``) or its pod
hostname (``pi-worker-0.pi.default.svc``). Locally each replica gets a loopback
address of its own — 127.0.0.2, 127.0.0.3, … — and every such name in an env
value, argument or mounted file is replaced by that address. Nothing touches
``/etc/hosts``: the training code simply reads addresses where it read names.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from trainjobs.k8s.data import Manifest
from trainjobs.plan import Replica

__all__ = [
    "CLUSTER_DOMAIN",
    "FIRST_ADDRESS",
    "WORKLOAD_KINDS",
    "HostMap",
    "address_of",
    "build_host_map",
    "service_env",
]

WORKLOAD_KINDS = ("Pod", "Job", "Deployment", "StatefulSet")
"""Objects whose pod becomes a process: bare Pods, and the one pod of a Job (MPI's
launcher) or of a backend's Deployment."""

CLUSTER_DOMAIN = "cluster.local"
"""The cluster domain of fully qualified names (``<svc>.<ns>.svc.cluster.local``)."""

FIRST_ADDRESS = ipaddress.IPv4Address("127.0.0.2")
"""The first replica's address; 127.0.0.1 is left to whatever else runs here."""

# Characters of a host name: a match must not be part of a longer name.
_BEFORE = r"(?<![A-Za-z0-9.\-])"
_AFTER = r"(?![A-Za-z0-9\-]|\.[A-Za-z0-9])"


def address_of(position: int) -> str:
    """The loopback address of the replica at ``position`` (0 → 127.0.0.2)."""
    address = FIRST_ADDRESS + position
    if address >= ipaddress.IPv4Address("127.255.255.255"):  # the broadcast address
        raise ValueError(f"too many replicas for the loopback network ({position + 1})")
    return str(address)


@dataclass(frozen=True)
class HostMap:
    """Which names reach which replica, and at which local address and ports.

    Attributes:
        addresses: workload name → its loopback address.
        names: host name → workload name, for every form the job can use.
        ports: (workload, container port) → the local port it listens on. Equal
            to the container port unless the runtime binds every address
            (see ``Framework.listens_on_all_addresses``), when each replica needs
            a port of its own.
    """

    addresses: Mapping[str, str]
    names: Mapping[str, str]
    ports: Mapping[tuple[str, int], int] = field(default_factory=dict)

    @cached_property
    def _pattern(self) -> re.Pattern[str] | None:
        if not self.names:
            return None
        # Longest first, so a fully qualified name wins over its short prefix.
        alternatives = "|".join(re.escape(n) for n in sorted(self.names, key=len, reverse=True))
        return re.compile(f"{_BEFORE}(?P<host>{alternatives}){_AFTER}(?::(?P<port>\\d+))?")

    def rewrite(self, text: str) -> str:
        """``text`` with every replica name replaced by its address (and port, if moved)."""
        if self._pattern is None:
            return text
        return self._pattern.sub(self._replace, text)

    def _replace(self, match: re.Match[str]) -> str:
        workload = self.names[match.group("host")]
        address = self.addresses[workload]
        port = match.group("port")
        if port is None:
            return address
        return f"{address}:{self.ports.get((workload, int(port)), int(port))}"

    def port(self, workload: str, container_port: int) -> int:
        """The local port of ``workload``'s ``container_port``."""
        return self.ports.get((workload, container_port), container_port)


def _pod_spec(manifest: Manifest) -> Mapping[str, Any]:
    if manifest.get("kind") == "Pod":
        return manifest.get("spec") or {}
    template = (manifest.get("spec") or {}).get("template") or {}
    return template.get("spec") or {}


def _pod_labels(manifest: Manifest) -> Mapping[str, str]:
    if manifest.get("kind") == "Pod":
        return (manifest.get("metadata") or {}).get("labels") or {}
    template = (manifest.get("spec") or {}).get("template") or {}
    return (template.get("metadata") or {}).get("labels") or {}


def _qualified(name: str, namespace: str) -> list[str]:
    """``name``, ``name.ns``, ``name.ns.svc`` and ``name.ns.svc.<cluster domain>``."""
    fqdn = f"{name}.{namespace}.svc"
    return [name, f"{name}.{namespace}", fqdn, f"{fqdn}.{CLUSTER_DOMAIN}"]


def _container_ports(spec: Mapping[str, Any]) -> list[int]:
    ports: list[int] = []
    for container in spec.get("containers") or []:
        for port in container.get("ports") or []:
            value = port.get("containerPort")
            if isinstance(value, int) and value not in ports:
                ports.append(value)
    return ports


def build_host_map(
    manifests: Sequence[Manifest],
    replicas: Sequence[Replica],
    namespace: str,
    *,
    distinct_ports: bool = False,
) -> HostMap:
    """Addresses for ``replicas`` (in order) and every name the job uses for them.

    Names: each workload's pod name and hostname; ``hostname.subdomain`` with
    its namespace forms; every Service that selects exactly one replica, in its
    short, ``.ns``, ``.ns.svc`` and fully qualified forms. A Service selecting
    several replicas (MPI's headless ``<job>``) names no single address and is
    left alone.
    """
    by_name = {
        (m.get("metadata") or {}).get("name"): m
        for m in manifests
        if m.get("kind") in WORKLOAD_KINDS
    }
    addresses = {r.workload: address_of(i) for i, r in enumerate(replicas)}
    names: dict[str, str] = {}
    ports: dict[tuple[str, int], int] = {}
    taken: set[int] = set()
    for replica in replicas:
        manifest = by_name.get(replica.workload) or {}
        spec = _pod_spec(manifest)
        names[replica.workload] = replica.workload
        hostname = spec.get("hostname") or replica.workload
        names.setdefault(hostname, replica.workload)
        if spec.get("subdomain"):
            for name in _qualified(f"{hostname}.{spec['subdomain']}", namespace):
                names[name] = replica.workload
        for port in _container_ports(spec):
            local = port
            if distinct_ports:
                while local in taken:
                    local += 1
                taken.add(local)
            ports[(replica.workload, port)] = local
    labelled = [(r.workload, _pod_labels(by_name.get(r.workload) or {})) for r in replicas]
    for service in (m for m in manifests if m.get("kind") == "Service"):
        selector = (service.get("spec") or {}).get("selector") or {}
        chosen = _selected(selector, labelled)
        if len(chosen) == 1:
            for name in _qualified(service["metadata"]["name"], namespace):
                names[name] = chosen[0]
    return HostMap(addresses, names, ports)


def _selected(
    selector: Mapping[str, str], pods: Iterable[tuple[str, Mapping[str, str]]]
) -> list[str]:
    if not selector:
        return []
    return [
        workload
        for workload, labels in pods
        if all(labels.get(key) == value for key, value in selector.items())
    ]


def service_env(manifests: Sequence[Manifest], hosts: HostMap, namespace: str) -> dict[str, str]:
    """The service environment variables the kubelet gives every pod, on loopback.

    For each Service of the namespace that has a cluster IP (headless ones get
    none) and reaches one replica: ``<NAME>_SERVICE_HOST``, ``<NAME>_SERVICE_PORT``
    (and ``_<PORT NAME>``), ``<NAME>_PORT`` and the ``<NAME>_PORT_<port>_<PROTO>``
    family, with the replica's address in place of the cluster IP.
    """
    env: dict[str, str] = {}
    for service in manifests:
        meta = service.get("metadata") or {}
        spec = service.get("spec") or {}
        if service.get("kind") != "Service" or spec.get("clusterIP") == "None":
            continue
        if meta.get("namespace", namespace) != namespace:
            continue
        workload = hosts.names.get(str(meta.get("name")))
        ports = [p for p in spec.get("ports") or [] if isinstance(p.get("port"), int)]
        if workload is None or not ports:
            continue
        prefix = str(meta["name"]).upper().replace("-", "_")
        address = hosts.addresses[workload]
        for i, port in enumerate(ports):
            number = hosts.port(workload, int(port["port"]))
            proto = str(port.get("protocol") or "TCP")
            url = f"{proto.lower()}://{address}:{number}"
            if i == 0:
                env[f"{prefix}_SERVICE_HOST"] = address
                env[f"{prefix}_SERVICE_PORT"] = str(number)
                env[f"{prefix}_PORT"] = url
            if port.get("name"):
                env[f"{prefix}_SERVICE_PORT_{str(port['name']).upper().replace('-', '_')}"] = str(
                    number
                )
            family = f"{prefix}_PORT_{number}_{proto}"
            env.update(
                {
                    family: url,
                    f"{family}_PROTO": proto.lower(),
                    f"{family}_PORT": str(number),
                    f"{family}_ADDR": address,
                }
            )
    return env
