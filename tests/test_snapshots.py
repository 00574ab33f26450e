"""Golden YAML of every example and every stack, on every target its jobs support.

Review each snapshot change as a reviewer would: every changed line must be intended.
Update with ``.venv/bin/pytest tests/test_snapshots.py --snapshot-update``.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from tests.support.paths import example_job_files, stack_files
from trainjobs.check import run
from trainjobs.k8s.crds import crd_dir, crd_files, load_crd
from trainjobs.k8s.redact import redact
from trainjobs.k8s.yamlio import dump_all
from trainjobs.spec import load_path


@cache
def _shipped_crds() -> dict[str, tuple[str, Any]]:
    """CRD name → (its file under crds/, its spec), for every CRD trainjobs ships."""
    shipped = {}
    for file in crd_files():
        crd = load_crd(str(file.relative_to(crd_dir())))
        if isinstance(crd, dict) and crd.get("kind") == "CustomResourceDefinition":
            shipped[crd["metadata"]["name"]] = (str(file.relative_to(crd_dir())), crd["spec"])
    return shipped


def _abbreviated(manifest: dict[str, Any]) -> dict[str, Any]:
    """A CRD installed exactly as shipped shows its schemas as a pointer to the file.

    Its schemas are hundreds of kilobytes that tests/test_crds.py and the vendoring
    README already guard; the snapshot keeps what a reviewer reads: names, versions,
    subresources, labels. A CRD whose versions differ from its file is shown whole.
    """
    name = manifest.get("metadata", {}).get("name")
    found = (
        _shipped_crds().get(name) if manifest.get("kind") == "CustomResourceDefinition" else None
    )
    # Fields an install adds beside the schemas (JobSet's conversion webhook) show as usual.
    if found is None or manifest["spec"]["versions"] != found[1]["versions"]:
        return manifest
    versions = [
        {**v, "schema": f"as in crds/{found[0]}"} if "schema" in v else v
        for v in manifest["spec"]["versions"]
    ]
    return {**manifest, "spec": {**manifest["spec"], "versions": versions}}


def _render(path: Path, target: str | None) -> str:
    rendering = run(load_path(path), target=target)  # type: ignore[arg-type]
    return dump_all(_abbreviated(redact(m)) for m in rendering.manifests)


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


def test_only_a_crd_installed_as_shipped_is_abbreviated() -> None:
    (name, (relative, spec)) = next(iter(_shipped_crds().items()))
    crd = {"kind": "CustomResourceDefinition", "metadata": {"name": name}, "spec": spec}
    short = _abbreviated(crd)
    assert {v.get("schema") for v in short["spec"]["versions"]} == {f"as in crds/{relative}"}
    other = [{**spec["versions"][0], "served": False}, *spec["versions"][1:]]
    changed = {**crd, "spec": {**spec, "versions": other}}
    assert _abbreviated(changed) is changed
    # What an install adds beside the schemas shows as usual; the schemas stay short.
    converted = _abbreviated({**crd, "spec": {**spec, "conversion": {"strategy": "Webhook"}}})
    assert converted["spec"]["conversion"] == {"strategy": "Webhook"}
    assert converted["spec"]["versions"] == short["spec"]["versions"]
