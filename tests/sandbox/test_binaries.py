"""Where the sandbox's programs come from: a variable per binary, the pinned build, PATH,
and what the error says when a program is missing and cannot be built."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from trainjobs.sandbox.binaries import BINARIES, MissingBinaries, binaries, build_script, env_var

REPO = Path(__file__).resolve().parents[2]


def _executable(path: Path) -> Path:
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache with nothing built (build.sh reads TRAINJOBS_CACHE); no variable set."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("TRAINJOBS_CACHE", str(cache))
    for name in BINARIES:
        monkeypatch.delenv(env_var(name), raising=False)
    return cache


def test_env_var_names_one_binary() -> None:
    assert env_var("kube-apiserver") == "TRAINJOBS_BIN_KUBE_APISERVER"
    assert env_var("etcd") == "TRAINJOBS_BIN_ETCD"


def test_the_clone_build_script_is_found() -> None:
    assert build_script({}) == REPO / "tests" / "cluster" / "build.sh"
    assert build_script({"TRAINJOBS_BUILD_SH": "/x/build.sh"}) == Path("/x/build.sh")


def test_a_named_binary_wins(tmp_path: Path, empty_cache: Path) -> None:
    kwok = _executable(tmp_path / "my-kwok")
    found = binaries(
        {"kwok": "kwok"}, build=False, environ={**os.environ, env_var("kwok"): str(kwok)}
    )
    assert found == {"kwok": kwok}


def test_a_named_file_that_is_not_executable_is_refused(tmp_path: Path, empty_cache: Path) -> None:
    plain = tmp_path / "kwok"
    plain.write_text("")
    with pytest.raises(MissingBinaries, match=r"TRAINJOBS_BIN_KWOK=.*is not an executable file"):
        binaries(
            {"kwok": "kwok"}, build=False, environ={**os.environ, "TRAINJOBS_BIN_KWOK": str(plain)}
        )


def test_path_only_when_asked(tmp_path: Path, empty_cache: Path) -> None:
    folder = tmp_path / "bin"
    folder.mkdir()
    kwok = _executable(folder / "kwok")
    environ = {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}
    with pytest.raises(MissingBinaries, match="missing programs: kwok"):
        binaries({"kwok": "kwok"}, build=False, environ=environ)
    assert binaries({"kwok": "kwok"}, build=False, from_path=True, environ=environ) == {
        "kwok": kwok
    }


def test_without_go_the_error_says_what_is_missing_and_how(
    tmp_path: Path, empty_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No Go on PATH and nothing built: no build is attempted; the message names the
    missing binaries, the build command and the per-binary variable."""
    bare = tmp_path / "bare"
    bare.mkdir()
    for tool in ("bash", "dirname", "mkdir", "flock", "grep"):
        target = next(
            Path(d) / tool
            for d in os.environ["PATH"].split(os.pathsep)
            if (Path(d) / tool).exists()
        )
        (bare / tool).symlink_to(target)
    monkeypatch.setenv("PATH", str(bare))
    with pytest.raises(MissingBinaries) as caught:
        binaries({"kwok": "kwok", "etcd": "etcd"}, build=True)
    message = str(caught.value)
    assert "missing programs: etcd, kwok" in message
    assert "install Go" in message
    assert "build.sh etcd kwok" in message
    assert "TRAINJOBS_BIN_ETCD=" in message
