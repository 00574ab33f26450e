"""Compile examples/typescript-platform with the generated SDK (sdk/nodejs) and tsc.

The example's Node packages come from ``make node-deps`` (its package-lock); nothing is
fetched here. The example and the SDK are copied into a temporary tree with the same
layout (the example's tsconfig names ../../sdk/nodejs), its node_modules linked.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.support.paths import ROOT

__all__ = ["EXAMPLE", "SDK", "compile_copy", "copy_example"]

EXAMPLE = ROOT / "examples" / "typescript-platform"
SDK = ROOT / "sdk" / "nodejs"


def copy_example(tmp: Path) -> Path:
    """The example and the SDK copied under ``tmp``; returns the example's copy."""
    modules = EXAMPLE / "node_modules"
    if not (modules / ".bin" / "tsc").is_file():
        raise AssertionError(f"{modules} lacks typescript: run `make node-deps`")
    example = tmp / "examples" / EXAMPLE.name
    shutil.copytree(EXAMPLE, example, ignore=shutil.ignore_patterns("node_modules", "bin"))
    (example / "node_modules").symlink_to(modules)
    shutil.copytree(SDK, tmp / "sdk" / "nodejs", ignore=shutil.ignore_patterns("node_modules"))
    return example


def compile_copy(example: Path) -> subprocess.CompletedProcess[str]:
    """``tsc -p`` on the copy; on success its JavaScript is in ``bin``, where the SDK is
    found as ``@trainjobs/trainjobs`` (a link in bin/node_modules)."""
    tsc = example / "node_modules" / ".bin" / "tsc"
    proc = subprocess.run(
        [str(tsc), "-p", str(example), "--pretty", "false"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if proc.returncode == 0:
        # The SDK reads its version from its package.json at run time.
        sdk = example.parents[1] / "sdk" / "nodejs"
        shutil.copy2(sdk / "package.json", example / "bin" / "sdk" / "nodejs" / "package.json")
        link = example / "bin" / "node_modules" / "@trainjobs" / "trainjobs"
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(example / "bin" / "sdk" / "nodejs")
    return proc
