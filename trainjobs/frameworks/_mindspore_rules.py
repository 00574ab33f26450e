"""The 2020 MSJob's rules: the operator's validation, and the seed's misplaced fields.

Split from ``mindspore`` to keep each module small; that module is the plugin.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trainjobs.errors import Finding, Rule, Severity
from trainjobs.frameworks._container_rules import default_container_findings, image_findings
from trainjobs.frameworks._seed import mount_findings
from trainjobs.k8s.pods import containers

if TYPE_CHECKING:
    from trainjobs.frameworks._mindspore_model import MSJob, MSReplicaSpec

__all__ = [
    "DEFAULT_CONTAINER",
    "DEFAULT_MASTER_PORT",
    "replica_findings",
    "role_of",
    "seed_field_findings",
    "spec_port",
    "template_findings",
]

DEFAULT_CONTAINER = "mindspore"
"""The only container the operator reads and injects env into."""
DEFAULT_MASTER_PORT = 23456

# The rules, declared once; each finding below says only where, the value and the facts.
BACKEND_TCP = Rule(
    "mindspore.backend",
    "backend is not part of the MSJob API and the operator dropped it; its only rendezvous is "
    "TCP through MASTER_ADDR and MASTER_PORT, so the job gets what 'tcp' asks for and the "
    "field is left out",
    hint="remove spec.backend",
    severity=Severity.WARNING,
)
BACKEND = Rule(
    "mindspore.backend",
    "backend is not part of the MSJob API; the 2020 operator can only rendezvous over TCP "
    "(MASTER_ADDR, MASTER_PORT)",
    hint="remove spec.backend (or set it to tcp)",
)
MASTER_PORT = Rule(
    "mindspore.master_port",
    "masterPort must be a port number from 1 to 65535",
    hint="e.g. masterPort: 23456, on each replica spec",
)
MASTER_PORT_PLACE = Rule(
    "mindspore.master_port",
    "masterPort belongs on each replica spec; the operator ignored it here and gave every "
    f"replica {DEFAULT_MASTER_PORT}. trainjobs applies {{port}} to each replica spec without "
    "a masterPort of its own",
    hint="move it: masterPort: {port} on each entry of spec.replicaSpecs",
    severity=Severity.WARNING,
)
REPLICA_TYPE_TWICE = Rule(
    "mindspore.replica_type_twice",
    "replicaType {role} is already used by replicaSpecs[{first}]",
    hint="merge the two specs and add up their replicas",
)
MASTER_REPLICAS = Rule(
    "mindspore.master_replicas",
    "the MASTER must have exactly one replica",
    hint="set replicas: 1 and add WORKER replicas instead",
)
MASTER_MISSING = Rule(
    "mindspore.master_missing",
    "there is no MASTER replica spec; every worker's MASTER_ADDR names the master's Service",
    hint="add a replica spec with replicaType: MASTER and replicas: 1",
)
TERMINATION_MASTER = Rule(
    "mindspore.termination_policy",
    "a terminationPolicy needs a master, the replica whose exit ends it",
    hint="add master: {{replicaName: MASTER, replicaRank: 0}}, or remove terminationPolicy "
    "for that default",
)
TERMINATION_REPLICA = Rule(
    "mindspore.termination_policy",
    "terminationPolicy.master names a replica type the job does not have",
    hint="use one of {known}",
)
TEMPLATE_METADATA = Rule(
    "mindspore.template_metadata",
    "the operator does not copy the template's {ignored} to its pods, and neither does trainjobs",
    hint="select pods by the operator's labels (ms_job_name, job_type, task_index)",
    severity=Severity.WARNING,
)
SCHEDULER_NAME = Rule(
    "mindspore.scheduler_name",
    "spec.schedulerName replaces the template's schedulerName on every pod",
    hint="set spec.schedulerName: {own} instead",
    severity=Severity.WARNING,
)


def spec_port(value: int | str | None) -> int | None:
    """The spec-level masterPort as a port number, or None when absent or not a port."""
    if isinstance(value, str):
        value = int(value) if value.isdigit() else None
    return value if value is not None and 1 <= value <= 65535 else None


def role_of(spec: MSReplicaSpec) -> str:
    """The replica type, defaulted to MASTER as the operator does."""
    return spec.replica_type or "MASTER"


def seed_field_findings(job: MSJob) -> list[Finding]:
    spec = job.spec
    findings: list[Finding] = []
    if spec.backend is not None:
        rule = BACKEND_TCP if spec.backend.lower() == "tcp" else BACKEND
        findings.append(rule.at("spec.backend", spec.backend))
    if spec.master_port is not None:
        port = spec_port(spec.master_port)
        rule = MASTER_PORT if port is None else MASTER_PORT_PLACE
        findings.append(rule.at("spec.masterPort", spec.master_port, port=port))
    return findings


def replica_findings(job: MSJob) -> list[Finding]:
    findings: list[Finding] = []
    seen: dict[str, int] = {}
    for i, replica in enumerate(job.spec.replica_specs):
        role = role_of(replica)
        if role in seen:
            path = f"spec.replicaSpecs[{i}].replicaType"
            findings.append(REPLICA_TYPE_TWICE.at(path, role, role=role, first=seen[role]))
        seen.setdefault(role, i)
        count = 1 if replica.replicas is None else replica.replicas
        if role == "MASTER" and count != 1:
            findings.append(MASTER_REPLICAS.at(f"spec.replicaSpecs[{i}].replicas", count))
    if "MASTER" not in seen:
        findings.append(MASTER_MISSING.at("spec.replicaSpecs", sorted(seen)))
    policy = job.spec.termination_policy
    missing = policy is not None and policy.master is None
    master = policy.master if policy is not None else None
    name = (master.replica_name if master is not None else None) or "MASTER"
    if missing:
        findings.append(TERMINATION_MASTER.at("spec.terminationPolicy.master"))
    elif name not in seen and name != "MASTER":
        known = ", ".join(sorted(seen)) or "MASTER"
        path = "spec.terminationPolicy.master.replicaName"
        findings.append(TERMINATION_REPLICA.at(path, name, known=known))
    return findings


def template_findings(job: MSJob, replica: MSReplicaSpec, path: str) -> list[Finding]:
    template = replica.template
    found = containers(template)
    why = "the operator refuses the job and injects its env only into that container"
    findings = default_container_findings(found, path, DEFAULT_CONTAINER, why)
    findings += image_findings(found, path, "e.g. image: mindspore/mindspore-cpu:0.1.0-alpha")
    findings += mount_findings(template, path)
    meta = template.get("metadata") or {}
    ignored = [k for k in ("labels", "annotations") if meta.get(k)]
    if ignored:
        value = {k: meta[k] for k in ignored}
        what = " or ".join(ignored)
        findings.append(TEMPLATE_METADATA.at(f"{path}.metadata", value, ignored=what))
    own = (template.get("spec") or {}).get("schedulerName")
    if own and own != job.spec.scheduler_name:
        findings.append(SCHEDULER_NAME.at(f"{path}.spec.schedulerName", own, own=own))
    return findings
