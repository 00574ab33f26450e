"""Which cluster stage refuses an input: trainjobs' claim (its findings' stages) and the
real API server's answer (a server-side dry run), for the stage-attribution tests."""

from __future__ import annotations

import copy
from typing import Any

from tests.cluster.control_plane import ControlPlane
from tests.cluster.kube import apply
from trainjobs.check import run
from trainjobs.check.stages import attribute
from trainjobs.errors import Finding, Severity, SpecError, Stage
from trainjobs.spec import parse_documents

AT_APPLY = {Stage.WEBHOOK, Stage.CRD_SCHEMA, Stage.API_SERVER, Stage.POD_SECURITY}


def our_errors(doc: dict[str, Any]) -> list[Finding]:
    """trainjobs check's errors on the operator target, each with its stage (loading's
    attributed as the CLI does)."""
    try:
        run(parse_documents([copy.deepcopy(doc)], source="bad-input"), target="operator")
    except SpecError as exc:
        return [f for f in attribute(exc.findings) if f.severity is Severity.ERROR]
    return []


def said_at_apply(finding: Finding) -> bool:
    """Whether the finding's stage refuses the custom resource itself, at apply."""
    return finding.stage in AT_APPLY and "when the operator creates" not in finding.stage_by


def custom_resource_refused(cluster: ControlPlane, doc: dict[str, Any]) -> str:
    """The API server's refusal (schema, CRD, webhook) of the custom resource alone, or ""."""
    cr, refused = custom_resource_in_place(cluster, doc)
    if refused:
        return refused
    result = apply(cluster, [cr], dry_run=True)
    return "" if result.ok else result.stderr.strip().splitlines()[-1]


def custom_resource_in_place(
    cluster: ControlPlane, doc: dict[str, Any]
) -> tuple[dict[str, Any], str]:
    """The custom resource of a job document (without trainjobs' options), its namespace
    made; and the API server's refusal of that namespace, or ""."""
    cr = {k: v for k, v in doc.items() if k != "trainjobs"}
    namespace = (cr.get("metadata") or {}).get("namespace", "default")
    try:
        cluster.ensure_namespace(namespace)
    except Exception as exc:  # an invalid namespace name: the API server refuses it
        return cr, f"namespace: {exc}"
    return cr, ""
