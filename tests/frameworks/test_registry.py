"""The registry: every plugin once, each with a shipped CRD and a README row."""

from __future__ import annotations

import re

import pytest
import yaml

from tests.support.paths import ROOT
from trainjobs.check.crd_schema import crd_dir
from trainjobs.frameworks import REGISTRY, Framework


def test_every_framework_is_registered_once_by_name_and_kind() -> None:
    names = [fw.name for fw in REGISTRY]
    assert names[:2] == ["tensorflow", "pytorch"]
    assert {"xgboost", "paddle", "jax", "mxnet"} <= set(names)
    assert len(set(names)) == len(names)
    for fw in REGISTRY:
        assert REGISTRY.by_name(fw.name) is fw
        assert REGISTRY.by_kind(fw.kind.api_version, fw.kind.kind) is fw


@pytest.mark.parametrize("fw", list(REGISTRY), ids=lambda fw: fw.name)
def test_crd_file_declares_the_frameworks_kind(fw: Framework) -> None:
    text = (crd_dir() / fw.crd_file).read_text()
    # Parse the head (names, group) and the version names; the schemas are 600 KB.
    head, _, versions = text.partition("\n  versions:\n")
    crd = yaml.safe_load(head)
    assert crd["metadata"]["name"] == fw.kind.crd_name
    assert crd["spec"]["group"] == fw.kind.group
    assert crd["spec"]["names"]["kind"] == fw.kind.kind
    assert crd["spec"]["names"]["plural"] == fw.kind.plural
    assert re.findall(r"^    name: (\S+)$", versions, re.M) == [fw.kind.version]


@pytest.mark.parametrize("fw", list(REGISTRY), ids=lambda fw: fw.name)
def test_readme_lists_the_framework(fw: Framework) -> None:
    readme = (ROOT / "README.md").read_text()
    row = (
        f"| {fw.name} | {fw.kind.api_version} {fw.kind.kind} | {', '.join(fw.targets)} "
        f"| {fw.operator}{' (legacy)' if fw.legacy else ''} |"
    )
    assert row in readme.splitlines()
