"""``trainjobs --help`` builds its parser without loading frameworks, schemas or checks.

Import cost is what a user waits for before any command starts; the benchmark
(bench/cli.py) times it, this test pins the cause: which modules the parser needs.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from trainjobs.cli import build_parser
from trainjobs.cli.edl import _DEFAULT_MAX_LOAD_HELP
from trainjobs.cli.frameworks import _GENERATED_DIR_HELP
from trainjobs.frameworks.crds import GENERATED_DIR
from trainjobs.platform.edl_controller import DEFAULT_MAX_LOAD

# Each costs tens to hundreds of milliseconds to import and is needed only once a
# command runs.
HEAVY = (
    "pydantic",
    "jsonschema",
    "kubernetes_validate",
    "pulumi",
    "trainjobs.frameworks.base",
    "trainjobs.platform.registry",
    "trainjobs.check.pipeline",
    "trainjobs.render.stack",
    "trainjobs.preview.plan",
    "trainjobs.graph.model",
    "trainjobs.local.run",
)


def test_help_loads_none_of_the_heavy_modules() -> None:
    probe = (
        "import sys, json, contextlib, io\n"
        "from trainjobs.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        main(['--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = set(json.loads(done.stdout))
    assert sorted(m for m in HEAVY if m in loaded) == []


def test_the_help_texts_name_the_real_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    assert _GENERATED_DIR_HELP == GENERATED_DIR
    assert _DEFAULT_MAX_LOAD_HELP == DEFAULT_MAX_LOAD
    with pytest.raises(SystemExit):
        build_parser().parse_args(["edl-scale", "--help"])
    assert f"else {DEFAULT_MAX_LOAD})" in " ".join(capsys.readouterr().out.split())
