"""What `pulumi install` reads, and the dependencies the code leans on.

`pulumi install` (and `pulumi up` on a fresh clone) reads Pulumi.yaml's runtime
options and, with ``toolchain: pip``, runs ``<virtualenv>/bin/python -m pip install
-r requirements.txt`` in the project folder. These tests read the same files and
ask pip itself (offline, dry run) what that command would install.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from tests.support.paths import ROOT
from trainjobs.check import k8s_schema


def _project() -> dict[str, object]:
    data: dict[str, object] = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())
    return data


def test_pulumi_yaml_asks_for_a_pip_virtualenv_in_the_clone() -> None:
    runtime = _project()["runtime"]
    assert isinstance(runtime, dict)
    assert runtime["name"] == "python"
    assert runtime["options"] == {"toolchain": "pip", "virtualenv": ".venv"}
    # pip runs in the folder of the program: the project root unless `main` moves it.
    assert "main" not in _project()


def _dry_run(tmp_path: Path) -> dict[str, Any]:
    report = tmp_path / "report.json"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--quiet",
            "--no-index",
            "--no-deps",
            "--no-build-isolation",
            "--report",
            str(report),
            "-r",
            "requirements.txt",
        ],
        cwd=ROOT,  # as Pulumi runs it
        check=True,
        capture_output=True,
    )
    data: dict[str, Any] = json.loads(report.read_text())
    return data


def test_pulumi_install_installs_this_project(tmp_path: Path) -> None:
    (item,) = _dry_run(tmp_path)["install"]
    assert item["metadata"]["name"] == "trainjobs"
    assert item["download_info"]["url"] == ROOT.as_uri()
    # Editable: `pulumi up` runs the trainjobs/ of this clone, not a copy.
    assert item["download_info"]["dir_info"] == {"editable": True}
    requires = [Requirement(r) for r in item["metadata"]["requires_dist"]]
    base = {r.name: r.specifier for r in requires if r.marker is None}
    # The floors the code needs: pulumi.com/waitFor came in pulumi-kubernetes 4.18.
    assert _floor(base["pulumi-kubernetes"]) >= (4, 18)
    policy = [r for r in requires if r.name == "pulumi-policy"]
    assert policy and _floor(policy[0].specifier) >= (1, 18)


def _floor(specifier: SpecifierSet) -> tuple[int, ...]:
    (low,) = [s.version for s in specifier if s.operator == ">="]
    return tuple(int(p) for p in low.split("."))


def test_the_stack_config_keys_are_declared_typed_in_pulumi_yaml() -> None:
    config = _project()["config"]
    assert isinstance(config, dict)
    assert all(key.startswith(f"{_project()['name']}:") for key in config)
    assert all("type" in value for value in config.values())


@pytest.mark.parametrize("version", ["1.32"])
def test_kubernetes_validate_still_ships_its_schemas_where_they_are_read(version: str) -> None:
    """check/k8s_schema.py reads kubernetes-validate's data folder, which is not its API:
    if a release moves it, this says so before every check silently finds nothing."""
    root = resources.files("kubernetes_validate").joinpath("kubernetes-json-schema")
    assert root.is_dir()
    assert version in k8s_schema.available_versions()
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": 1}}
    assert k8s_schema.has_schema(pod, version)
    assert [path for path, _, _ in k8s_schema.problems(pod, version)] == ["spec.containers"]


CURRENT_RELEASES = {
    "pulumi": "3.272.0",
    "pulumi-kubernetes": "4.34.2",
    "kubernetes": "37.0.2",
    "pydantic": "2.14.4",
    "pyyaml": "6.0.4",
    "rich": "15.0.0",
    "jsonschema": "4.26.0",
    "kubernetes-validate": "1.37.0",
    "typing-extensions": "4.16.0",
}
"""The newest release of each runtime dependency a platform repo would have next to
trainjobs, as PyPI listed them on 2026-11-28 (`pip index versions NAME`). Refresh with
each release of trainjobs; a pin that refuses one of these makes trainjobs uninstallable
beside a current platform repo."""


def _installed_requirements() -> list[Requirement]:
    from importlib.metadata import requires

    return [Requirement(r) for r in requires("trainjobs") or []]


@pytest.mark.parametrize("name", sorted(CURRENT_RELEASES))
def test_runtime_pins_admit_the_current_release(name: str) -> None:
    """Fails on the old pin `pulumi-kubernetes>=4.25.0,<4.26`, which refused 4.26 onward."""
    (req,) = [r for r in _installed_requirements() if r.name.lower() == name and r.marker is None]
    assert req.specifier.contains(CURRENT_RELEASES[name]), f"{req} refuses {CURRENT_RELEASES[name]}"


def test_runtime_pins_admit_every_later_release_of_the_same_major() -> None:
    """A runtime range is a floor (what the code needs), with at most the next major as
    its ceiling: the tested versions belong to constraints.txt, not to the package."""
    for req in _installed_requirements():
        if req.marker is not None:
            continue
        for spec in req.specifier:
            assert spec.operator in (">=", "<"), f"{req}: pin the tested version in constraints.txt"
            if spec.operator == "<":
                (floor,) = [s.version for s in req.specifier if s.operator == ">="]
                major = int(floor.split(".")[0])
                assert spec.version in (f"{major + 1}", f"{major + 1}.0"), req


def test_constraints_pin_a_toolchain_the_ranges_admit() -> None:
    """The versions the tests run (constraints.txt) are inside the package's ranges."""
    pinned = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, _, version = line.partition("==")
            pinned[name.strip().lower().replace("_", "-")] = version.strip()
    for req in _installed_requirements():
        name = req.name.lower().replace("_", "-")
        if req.marker is None and name in pinned:
            assert req.specifier.contains(pinned[name]), f"{req} refuses the tested {pinned[name]}"
