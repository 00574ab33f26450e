"""The policy pack in ``pulumi preview --policy-pack`` reports what ``trainjobs check`` does.

The demo stack at the restricted Pod Security level has findings in every job; the
pack runs inside the real engine against the real provider's resources. Compared per
job: each rule `trainjobs check --profile restricted` reports for a job is a policy
violated by that job's objects (its custom resource, or its Pods on the pods target),
and no other policy is. (check reports a pod template once; the pack each Pod.)
"""

from __future__ import annotations

import re
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.cluster.control_plane import ControlPlane
from tests.cluster.pulumi_up.pulumi_cli import REPO, Project, render
from trainjobs.check import run
from trainjobs.components.policy import policy_name
from trainjobs.errors import Finding, SpecError
from trainjobs.spec import load_path

STACK = "demo"


def test_policy_pack_reports_the_check_findings(
    cluster: ControlPlane, pulumi_dirs: list[Path], tmp_path: Path
) -> None:
    """Same (policy, job) pairs on both sides.

    Fails when the pack turns a resource's arguments into a different manifest than
    the render (a rule then misses or invents a finding), or when the pack does not
    start inside the engine at all.
    """
    stack = load_path(REPO / "stacks" / f"Pulumi.{STACK}.yaml")
    findings: Sequence[Finding]
    try:
        findings = run(stack, profile="restricted").findings
    except SpecError as exc:  # errors at this level: what `trainjobs check` exits 2 with
        findings = exc.findings
    jobs = [f"{entry.job.metadata.namespace}/{entry.job.metadata.name}" for entry in stack.jobs]
    expected = {
        (policy_name(f.code), jobs[int(m.group(1))])
        for f in findings
        if (m := re.match(r"jobs\[(\d+)\]", f.path))
    }
    assert expected, "the demo stack has restricted findings: the test would prove nothing"
    job_of = {
        (m["kind"], f"{m['metadata'].get('namespace')}/{m['metadata']['name']}"): _job_of(m)
        for m in render(REPO / "stacks" / f"Pulumi.{STACK}.yaml")
    }
    project = Project(tmp_path, kubeconfig=cluster.kubeconfig, dirs=pulumi_dirs)
    project.init(STACK)
    result = project.pulumi(
        "preview",
        "--stack",
        STACK,
        "--policy-pack",
        str(_launcher(project)),
        "--policy-pack-config",
        str(project.root / "policy" / "restricted.json"),
        ok=(0, 1, 255),
    )
    reported = {
        (policy, job_of[(kind, obj)]) for policy, kind, obj in _VIOLATION.findall(result.stdout)
    }
    assert reported, str(result)
    assert reported == expected


def _job_of(manifest: dict[str, Any]) -> str:
    """``namespace/name`` of the job an object belongs to."""
    meta = manifest["metadata"]
    labels = meta.get("labels") or {}
    name = labels.get("training.kubeflow.org/job-name", meta["name"])
    return f"{meta.get('namespace')}/{name}"


def _launcher(project: Project) -> Path:
    """An executable that runs the pack, with its PulumiPolicy.yaml beside it.

    ``--policy-pack policy`` asks the language host to start the pack (RunPlugin),
    which the v3.68 host we can build cannot do for today's engine (it gets no program
    path); given a file, the engine starts it directly, as it would a binary pack.
    The pack's code, its configuration and the engine's analyzer calls are the same.
    """
    folder = project.workdir / "policy-launcher"
    folder.mkdir()
    launcher = folder / "trainjobs-policy"
    main = project.root / "policy" / "__main__.py"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -u "{main}" "$@"\n')
    launcher.chmod(0o755)
    shutil.copy2(project.root / "policy" / "PulumiPolicy.yaml", folder / "PulumiPolicy.yaml")
    return launcher


_VIOLATION = re.compile(
    r"- \[(?:mandatory|advisory)\] \[severity: \w+\]\s+([a-z0-9-]+)\s+"
    r"\(kubernetes:[^:]+:(\w+): ([^)]+)\)"
)
"""One violation in pulumi's text output: policy, kind, namespace/name."""
