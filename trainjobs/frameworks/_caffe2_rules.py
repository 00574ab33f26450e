"""The Caffe2Job's rules: those upstream wrote but never called, and host-network DNS.

Split from ``caffe2`` to keep each module small; that module is the plugin.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trainjobs.errors import Finding, Rule, Severity
from trainjobs.frameworks._container_rules import image_findings, no_containers
from trainjobs.frameworks._seed import mount_findings
from trainjobs.k8s.data import PodTemplate
from trainjobs.k8s.pods import containers

if TYPE_CHECKING:
    from trainjobs.frameworks._caffe2_model import Caffe2BackendSpec, Caffe2Job

__all__ = ["TEMPLATE_PATH", "backend_findings", "describe", "template_findings"]

TEMPLATE_PATH = "spec.replicaSpecs.template"
"""Where the one pod template sits in a Caffe2Job."""

# The rules, declared once; each finding below says only where, the value and the facts.
_NAMED = "or name a RedisBackend or NfsBackend in trainjobs.backend"
BACKEND_NEEDED = Rule(
    "caffe2.backend_needed",
    "{replicas} workers need a redis or nfs backend to find each other",
    hint=f"set backendType to redis or nfs, {_NAMED}",
)
NFS_PATH = Rule(
    "caffe2.nfs_path",
    "the nfs backend needs nfsPath, the shared directory (NFS_PATH)",
    hint=f"set nfsPath to a directory every worker mounts, {_NAMED}",
)
REDIS_HOST = Rule(
    "caffe2.redis_host",
    "the redis backend needs redisHost (REDIS_HOST)",
    hint=f"set redisHost and redisPort, {_NAMED}",
)
BACKEND_REPLACED = Rule(
    "caffe2.backend_replaced",
    "the backend named in trainjobs.backend replaces this backendSpecs; the job now uses {now}",
    hint="remove spec.backendSpecs, or remove trainjobs.backend",
    severity=Severity.WARNING,
)
HOST_NETWORK_DNS = Rule(
    "caffe2.host_network_dns",
    "a hostNetwork pod with dnsPolicy ClusterFirst uses the node's resolver, so the Redis host "
    "and the CAFFE2_CONFIG hosts do not resolve",
    hint="set dnsPolicy: ClusterFirstWithHostNet (or leave it out)",
    severity=Severity.WARNING,
)


def describe(backend: Caffe2BackendSpec) -> str:
    """``redis redis-service:6379`` or ``nfs /share``, for messages."""
    if backend.backend_type == "redis":
        return f"redis {backend.redis_host}:{backend.redis_port or 0}"
    return f"{backend.backend_type} {backend.nfs_path or ''}".rstrip()


def backend_findings(job: Caffe2Job) -> list[Finding]:
    """The rules upstream wrote in ValidateCaffe2JobSpec, and a replaced backendSpecs."""
    spec = job.spec
    backend = spec.backend_specs
    replicas = 1 if spec.replica_specs.replicas is None else spec.replica_specs.replicas
    kind = (backend and backend.backend_type) or ("none" if replicas == 1 else "redis")
    findings: list[Finding] = []
    path = "spec.backendSpecs"
    if kind == "none" and replicas > 1:
        findings.append(BACKEND_NEEDED.at(f"{path}.backendType", "none", replicas=replicas))
    if kind == "nfs" and not (backend and backend.nfs_path):
        findings.append(NFS_PATH.at(f"{path}.nfsPath"))
    if kind == "redis" and not (backend and backend.redis_host):
        findings.append(REDIS_HOST.at(f"{path}.redisHost"))
    replaced = job.replaced_backend
    if replaced is not None and backend is not None:
        findings.append(BACKEND_REPLACED.at(path, describe(replaced), now=describe(backend)))
    return findings


def template_findings(template: PodTemplate) -> list[Finding]:
    """Containers with images, mounts of declared volumes, and DNS on the host network."""
    findings: list[Finding] = []
    found = containers(template)
    if not found:
        findings.append(
            no_containers(
                TEMPLATE_PATH, "add a container running the Caffe2 trainer", "the workers need"
            )
        )
    findings += image_findings(
        found, TEMPLATE_PATH, "e.g. image: kubeflow/caffe2:py2-cuda9.0-cudnn7-ubuntu16.04"
    )
    findings += mount_findings(template, TEMPLATE_PATH)
    pod = template.get("spec") or {}
    if pod.get("hostNetwork") and pod.get("dnsPolicy") == "ClusterFirst":
        path = f"{TEMPLATE_PATH}.spec.dnsPolicy"
        findings.append(HOST_NETWORK_DNS.at(path, "ClusterFirst"))
    return findings
