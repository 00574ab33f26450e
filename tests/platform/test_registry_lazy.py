"""The platform registry knows every kind and its category before importing it, and
imports a kind's module only when that kind is asked for."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from tests.support.paths import ROOT
from trainjobs.platform.registry import _PLUGINS, PLATFORM, PlatformPlugin, PlatformRegistry


@pytest.mark.parametrize("plugin", _PLUGINS, ids=lambda p: p.kind)
def test_each_line_says_what_its_module_declares(plugin: PlatformPlugin) -> None:
    kind = plugin.load()
    assert (kind.kind, kind.category) == (plugin.kind, plugin.category)
    assert PLATFORM.by_kind(plugin.kind) is kind


def test_every_module_that_defines_a_kind_has_a_line() -> None:
    package = ROOT / "trainjobs" / "platform"
    defining = {
        ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for path in package.rglob("*.py")
        if re.search(r"^KIND = ", path.read_text(), re.M)
    }
    assert defining == {type(plugin.load()).__module__ for plugin in _PLUGINS}


def test_a_line_that_disagrees_with_its_module_is_refused() -> None:
    wrong = PlatformPlugin("RedisBackend", "queue", "trainjobs.platform.redis")
    with pytest.raises(RuntimeError, match=r"fix the line in trainjobs/platform/registry\.py"):
        PlatformRegistry([wrong]).by_kind("RedisBackend")


def test_kinds_are_listed_by_category_without_importing() -> None:
    redis = PlatformPlugin("RedisBackend", "backend", "no.such.module")
    with pytest.raises(ValueError, match="registered twice"):
        PlatformRegistry([redis, redis])
    queue = PlatformPlugin("GpuQueue", "queue", "no.such.module")
    registry = PlatformRegistry([redis, queue])
    assert registry.kinds() == ["RedisBackend", "GpuQueue"]
    assert registry.kinds("queue") == ["GpuQueue"]
    assert registry.by_kind("NfsBackend") is None


def test_asking_for_one_kind_imports_only_its_module() -> None:
    probe = (
        "import sys, json\n"
        "from trainjobs.platform import PLATFORM\n"
        "before = set(sys.modules)\n"
        "assert 'GpuQueue' in PLATFORM.kinds('queue')\n"
        "assert set(sys.modules) == before\n"
        "assert PLATFORM.by_kind('RedisBackend').kind == 'RedisBackend'\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = set(json.loads(done.stdout))
    assert "trainjobs.platform.redis" in loaded
    assert sorted(p.module for p in _PLUGINS if p.module in loaded) == ["trainjobs.platform.redis"]


def test_a_kind_reads_the_model_its_base_is_parameterised_with() -> None:
    from trainjobs.platform.base import BackendKind, PlatformKind
    from trainjobs.platform.redis import RedisBackend, RedisBackendKind

    assert RedisBackendKind().model is RedisBackend
    assert RedisBackendKind().kind == "RedisBackend"
    with pytest.raises(TypeError, match=r"Bare has no model: parameterise its base"):

        class Bare(BackendKind):
            title = "bare"

    assert "model" not in PlatformKind.__dict__
