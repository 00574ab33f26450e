"""The framework registry knows every plugin's name and kind before importing it, and
imports a framework's module only when that framework is asked for."""

from __future__ import annotations

import configparser
import json
import re
import subprocess
import sys

import pytest

from tests.support.paths import ROOT
from trainjobs.frameworks.registry import _PLUGINS, REGISTRY, Plugin, Registry


@pytest.mark.parametrize("plugin", _PLUGINS, ids=lambda p: p.name)
def test_each_line_says_what_its_module_declares(plugin: Plugin) -> None:
    framework = plugin.load()
    assert (framework.name, framework.kind.api_version, framework.kind.kind) == (
        plugin.name,
        plugin.api_version,
        plugin.kind,
    )
    assert REGISTRY.by_name(plugin.name) is framework


def test_every_module_that_defines_a_framework_has_a_line() -> None:
    package = ROOT / "trainjobs" / "frameworks"
    defining = {
        ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for path in package.rglob("*.py")
        if re.search(r"^FRAMEWORK = ", path.read_text(), re.M)
    }
    assert defining == {type(plugin.load()).__module__ for plugin in _PLUGINS}


# The framework package's shared modules, which the rest of trainjobs may import.
SHARED = {"__init__", "base", "capabilities", "crds", "registry"}


def test_every_framework_module_is_forbidden_outside_frameworks() -> None:
    """The `.importlinter` contract lists modules by name: one left out is not guarded."""
    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter", encoding="utf-8")
    contract = config["importlinter:contract:framework-modules"]
    listed = set(contract["forbidden_modules"].split())
    package = ROOT / "trainjobs" / "frameworks"
    modules = {
        f"trainjobs.frameworks.{path.stem}"
        for path in package.iterdir()
        if path.stem not in SHARED and (path.suffix == ".py" or (path / "__init__.py").is_file())
    }
    assert sorted(modules - listed) == [], "add them to forbidden_modules in .importlinter"
    assert sorted(listed - modules) == []


def test_a_line_that_disagrees_with_its_module_is_refused() -> None:
    wrong = Plugin("tensorflow", "kubeflow.org/v1", "PyTorchJob", "trainjobs.frameworks.tensorflow")
    with pytest.raises(RuntimeError, match=r"fix the line in trainjobs/frameworks/registry\.py"):
        Registry([wrong]).by_kind("kubeflow.org/v1", "PyTorchJob")
    # A line that leaves out the kinds its framework defines is as wrong, and says which.
    trainer = "trainer.kubeflow.org/v1alpha1"
    bare = Plugin("trainjob", trainer, "TrainJob", "trainjobs.frameworks.trainjob")
    with pytest.raises(RuntimeError, match=r"'TrainJob', \(\('trainer\.kubeflow\.org"):
        Registry([bare]).by_name("trainjob")


def test_names_and_kinds_are_checked_once_each_without_importing() -> None:
    tf = Plugin("tensorflow", "kubeflow.org/v1", "TFJob", "no.such.module")
    with pytest.raises(ValueError, match="registered twice"):
        Registry([tf, tf])
    with pytest.raises(ValueError, match="claimed by two"):
        Registry([tf, Plugin("other", "kubeflow.org/v1", "TFJob", "no.such.module")])
    assert Registry([tf]).kinds() == ["kubeflow.org/v1 TFJob"]
    assert Registry([tf]).by_kind("kubeflow.org/v1", "PyTorchJob") is None
    assert Registry([tf]).by_name("pytorch") is None


def test_asking_for_one_framework_imports_only_its_module() -> None:
    probe = (
        "import sys, json\n"
        "from trainjobs.frameworks import REGISTRY\n"
        "from trainjobs.frameworks.registry import _PLUGINS\n"
        "before = set(sys.modules)\n"
        "assert len(REGISTRY) == len(_PLUGINS) and 'kubeflow.org/v1 TFJob' in REGISTRY.kinds()\n"
        "assert REGISTRY.names()[0] == 'tensorflow'\n"
        "assert set(sys.modules) == before\n"
        "assert REGISTRY.by_kind('kubeflow.org/v1', 'TFJob').name == 'tensorflow'\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = set(json.loads(done.stdout))
    others = {p.module for p in _PLUGINS if p.name != "tensorflow"}
    assert "trainjobs.frameworks.tensorflow" in loaded
    assert sorted(others & loaded) == []
