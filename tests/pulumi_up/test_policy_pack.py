"""The policy pack in ``pulumi preview --policy-pack`` reports what ``trainjobs check`` does.

The demo stack at the restricted Pod Security level has findings in every job; the
pack runs inside the real engine against the real provider's resources, and each
finding of ``trainjobs check --profile restricted`` must come back as a violation of
the policy of its rule, and each violation must be one of those findings.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.cluster.control_plane import ControlPlane
from tests.pulumi_up.pulumi_cli import REPO, Project
from trainjobs.check import run
from trainjobs.components.policy import policy_name
from trainjobs.spec import load_path

STACK = "demo"


def test_policy_pack_reports_the_check_findings(
    cluster: ControlPlane, pulumi_dirs: list[Path], tmp_path: Path
) -> None:
    """Same (policy, message) pairs on both sides.

    Fails when the pack turns a resource's arguments into a different manifest than
    the render (a rule then misses or invents a finding), or when the pack does not
    start inside the engine at all.
    """
    rendering = run(load_path(REPO / "stacks" / f"Pulumi.{STACK}.yaml"), profile="restricted")
    expected = {(policy_name(f.code), f.message) for f in rendering.findings}
    assert expected, "the demo stack has restricted findings: the test would prove nothing"
    project = Project(
        tmp_path,
        kubeconfig=cluster.kubeconfig,
        dirs=pulumi_dirs,
        extra_env={"TRAINJOBS_PROFILE": "restricted"},
    )
    project.init(STACK)
    result = project.pulumi(
        "preview", "--stack", STACK, "--policy-pack", str(project.root / "policy"), ok=(0, 255)
    )
    text = result.stdout + result.stderr
    reported = _violations(text)
    assert reported, str(result)
    missing = {(p, m) for p, m in expected if not any(p == q and m in t for q, t in reported)}
    unexplained = {(q, t) for q, t in reported if not any(p == q and m in t for p, m in expected)}
    assert (missing, unexplained) == (set(), set()), str(result)


_VIOLATION = re.compile(r"\[(?:mandatory|advisory)\]\s+trainjobs v\S+\s+([a-z0-9-]+)\s+\(")


def _violations(text: str) -> set[tuple[str, str]]:
    """(policy, its message) for each violation in pulumi's text output."""
    found: set[tuple[str, str]] = set()
    lines = text.splitlines()
    for i, line in enumerate(lines):
        match = _VIOLATION.search(line)
        if match:
            body = []
            for follow in lines[i + 1 :]:
                if not follow.strip() or _VIOLATION.search(follow):
                    break
                body.append(follow.strip())
            found.add((match.group(1), " ".join(body)))
    return found
