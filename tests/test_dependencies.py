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
