"""The committed SDKs (sdk/nodejs, sdk/go) are what pulumi-codegen makes of the schema.

pulumi-codegen is built from the Go module proxy by tests/cluster/build.sh (on first
use, as the cluster programs are); ``make sdk`` rewrites the SDKs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT
from trainjobs.provider.schema import SCHEMA_PATH

BUILD_SH = ROOT / "tests" / "cluster" / "build.sh"


def _codegen() -> Path:
    out = subprocess.run(
        [str(BUILD_SH), "--print-dir", "pulumi-codegen"], check=True, capture_output=True, text=True
    )
    tool = Path(out.stdout.strip()) / "pulumi-codegen"
    if not tool.is_file():
        subprocess.run([str(BUILD_SH), "pulumi-codegen"], check=True, stdout=sys.stderr)
    return tool


def _files(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): p.read_text()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "node_modules" not in p.parts and p.name != "go.mod"
    }


@pytest.mark.parametrize("language", ["nodejs", "go"])
def test_the_committed_sdk_is_the_schemas(language: str, tmp_path: Path) -> None:
    out = tmp_path / language
    subprocess.run(
        [str(_codegen()), language, str(ROOT / SCHEMA_PATH), str(out)], check=True, timeout=300
    )
    committed = _files(ROOT / "sdk" / language)
    assert committed == _files(out), f"sdk/{language} is stale: run `make sdk` and commit it"
