"""``trainjobs --help`` builds its parser without loading frameworks, schemas or checks,
and ``trainjobs check`` of one TFJob loads TensorFlow's framework and nothing of the
other frameworks, the platform kinds it does not use, or jsonschema.

Import cost is what a user waits for before any command starts; the benchmark
(bench/cli.py) times it, these tests pin the cause: which modules a command needs.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT
from trainjobs.cli import main
from trainjobs.cli.edl import _DEFAULT_MAX_LOAD_HELP
from trainjobs.frameworks.crds import GENERATED_DIR
from trainjobs.frameworks.registry import _PLUGINS as FRAMEWORKS
from trainjobs.output import WRITTEN_LIST
from trainjobs.platform.edl_controller import DEFAULT_MAX_LOAD
from trainjobs.platform.registry import _PLUGINS as PLATFORM_KINDS

# Each costs tens to hundreds of milliseconds to import and is needed only once a
# command runs.
HEAVY = (
    "rich",
    "pydantic",
    "jsonschema",
    "kubernetes_validate",
    "pulumi",
    "trainjobs.frameworks.base",
    "trainjobs.targets.registry",
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


# What a check of a valid job needs none of: jsonschema is for a node the compiled
# checks leave to it or an error to report, kubernetes-validate's package for its
# own validate (its schema files are read without importing it).
# rich only colours a terminal (the probe's output is not one).
NOT_FOR_A_VALID_JOB = ("jsonschema", "referencing", "kubernetes_validate", "pulumi", "rich")


def _loaded_by(argv: list[str], cache: Path) -> set[str]:
    probe = (
        "import sys, json, contextlib, io\n"
        "from trainjobs.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    code = main({argv!r})\n"
        "assert code == 0, code\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env
    )
    return set(json.loads(done.stdout))


def test_check_of_one_tfjob_loads_only_tensorflow_and_no_jsonschema(tmp_path: Path) -> None:
    argv = ["check", str(ROOT / "examples" / "tf-mnist" / "tfjob.yaml")]
    cold = _loaded_by(argv, tmp_path)  # the schema cache is empty: parsed and kept
    assert list((tmp_path / "trainjobs" / "schemas").glob("*.json"))
    warm = _loaded_by(argv, tmp_path)  # read from the cache
    for loaded in (cold, warm):
        assert "trainjobs.frameworks.tensorflow" in loaded
        others = {p.module for p in FRAMEWORKS if p.name != "tensorflow"}
        assert sorted(others & loaded) == []
        # Node pools and queues are read by the placement checks every render runs.
        unused = {p.module for p in PLATFORM_KINDS if p.category in ("operator", "backend")}
        assert sorted(unused & loaded) == []
        heavy = {m.split(".")[0] for m in loaded} & set(NOT_FOR_A_VALID_JOB)
        assert sorted(heavy) == []


def _help(command: str, capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    return capsys.readouterr().out


def test_the_help_texts_name_the_real_defaults(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The help spells these out so that building the parser imports none of their modules.
    monkeypatch.setenv("COLUMNS", "1000")  # no wrapping, which may break at a hyphen
    assert _DEFAULT_MAX_LOAD_HELP == DEFAULT_MAX_LOAD
    assert f"else {DEFAULT_MAX_LOAD})" in _help("edl-scale", capsys)
    assert f" DIR/{GENERATED_DIR}/ " in _help("crds", capsys)
    assert f" DIR/{WRITTEN_LIST} " in _help("render", capsys)


def test_the_collector_paused_for_loading_comes_back_as_it_was() -> None:
    from trainjobs.cli.common import _modules_loading

    assert gc.isenabled()
    try:
        with _modules_loading():
            assert not gc.isenabled()
        assert gc.isenabled()
        gc.disable()
        with _modules_loading():
            assert not gc.isenabled()
        assert not gc.isenabled()  # a caller that turned it off keeps it off
    finally:
        gc.enable()
        gc.unfreeze()  # what the first pause froze goes back to the collector
