"""Golden YAML of every example and every stack, on every target its jobs support.

Review each snapshot change as a reviewer would: every changed line must be intended.
Update with ``.venv/bin/pytest tests/test_snapshots.py --snapshot-update``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from tests.support.paths import example_job_files, stack_files
from trainjobs.check import run
from trainjobs.k8s.redact import redact
from trainjobs.k8s.yamlio import dump_all
from trainjobs.spec import load_path


def _readable(manifest: dict[str, Any]) -> dict[str, Any]:
    """A CRD's schemas (up to 900 KB each) are vendored in crds/ and checked against
    upstream by tests/platform/test_operator_parity.py; a snapshot shows the rest."""
    if manifest.get("kind") != "CustomResourceDefinition":
        return manifest
    versions = [v["name"] for v in manifest["spec"]["versions"]]
    spec = {**manifest["spec"], "versions": f"<elided: {', '.join(versions)}; see crds/>"}
    return {**manifest, "spec": spec}


def _render(path: Path, target: str | None) -> str:
    rendering = run(load_path(path), target=target)  # type: ignore[arg-type]
    return dump_all(_readable(redact(m)) for m in rendering.manifests)


@pytest.mark.parametrize("path", stack_files(), ids=lambda p: p.stem)
def test_stack_snapshot(path: Path, yaml_snapshot: SnapshotAssertion) -> None:
    assert _render(path, None) == yaml_snapshot


def _example_cases() -> list[tuple[Path, str]]:
    cases = []
    for path in example_job_files():
        stack = load_path(path)
        targets = set.intersection(*(set(e.framework.targets) for e in stack.jobs))
        cases += [(path, t) for t in sorted(targets)]
    return cases


@pytest.mark.parametrize(
    ("path", "target"),
    _example_cases(),
    ids=lambda v: f"{v.parent.name}-{v.stem}" if isinstance(v, Path) else str(v),
)
def test_example_snapshot(path: Path, target: str, yaml_snapshot: SnapshotAssertion) -> None:
    assert _render(path, target) == yaml_snapshot
