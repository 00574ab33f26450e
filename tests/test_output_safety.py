"""``trainjobs render -o DIR`` is all or nothing, and touches nothing outside DIR.

A failure at any point — a file that cannot be written, the final renames, an
interrupt — leaves an existing DIR and its parent folder byte for byte as they
were. While rendering, the only new entries in DIR are its hidden staging files
(``.trainjobs-staging.*``), gone when the command returns; nothing is made beside DIR.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import stack_files
from trainjobs.cli import main
from trainjobs.k8s.yamlio import dump_one
from trainjobs.output import WRITTEN_LIST, folder, write_folder

STACK = str(stack_files()[0])


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under ``root``."""
    return {
        str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
    }


OLD_NAME = "0000-pod-training-old.yaml"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A parent folder holding an earlier render in ``out`` and a file of the user's beside."""
    out = tmp_path / "parent" / "out"
    write_folder(out, {OLD_NAME: "kind: Pod\nmetadata: {name: old}\n"})
    (tmp_path / "parent" / "keep.txt").write_text("beside the output\n")
    return tmp_path / "parent"


def _watch_writes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record the path of every file opened for writing, folder made or path renamed."""
    touched: list[str] = []
    real_open, real_mkdir, real_rename = Path.open, os.mkdir, os.rename
    real_replace, real_os_open = os.replace, os.open

    def watched_open(self: Path, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if any(c in mode for c in "wax+"):
            touched.append(str(self))
        return real_open(self, mode, *args, **kwargs)

    def watched_mkdir(path: Any, *args: Any, **kwargs: Any) -> None:
        real_mkdir(path, *args, **kwargs)  # an existing folder raises: nothing made
        touched.append(str(path))

    def watched_rename(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
        touched.extend([str(src), str(dst)])
        real_rename(src, dst, *args, **kwargs)

    def watched_replace(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
        touched.extend([str(src), str(dst)])
        real_replace(src, dst, *args, **kwargs)

    def watched_os_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            touched.append(str(path))
        return real_os_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(Path, "open", watched_open)
    monkeypatch.setattr(os, "mkdir", watched_mkdir)
    monkeypatch.setattr(os, "rename", watched_rename)
    monkeypatch.setattr(os, "replace", watched_replace)
    monkeypatch.setattr(os, "open", watched_os_open)
    return touched


def test_render_writes_only_inside_dir_and_its_temporary_siblings(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = workspace / "out"
    touched = _watch_writes(monkeypatch)
    listings: list[list[str]] = []
    real_write = dump_one

    def dump_and_look(manifest: Any) -> str:
        listings.append(sorted(os.listdir(workspace)))
        return real_write(manifest)

    monkeypatch.setattr("trainjobs.cli.render.dump_one", dump_and_look)
    assert main(["render", STACK, "-o", str(out), "-q"]) == 0
    assert touched and listings
    # The schema cache (check.schema_cache) is trainjobs' own folder, written the first
    # time a process checks; outside it, every write is inside DIR.
    cache = Path(os.environ["XDG_CACHE_HOME"]).resolve() / "trainjobs"
    for path in touched:
        if Path(path).resolve().is_relative_to(cache):
            continue
        relative = Path(path).resolve().relative_to(workspace.resolve())
        assert relative.parts[0] == "out", path
    # While the objects are turned into text, nothing new is beside DIR or in it.
    for listing in listings:
        assert listing == ["keep.txt", "out"]
    assert sorted(os.listdir(workspace)) == ["keep.txt", "out"]
    assert (workspace / "keep.txt").read_text() == "beside the output\n"
    names = os.listdir(out)
    assert OLD_NAME not in names and WRITTEN_LIST in names  # the earlier render's file went
    assert not [n for n in names if n.startswith(".trainjobs-staging")]
    assert all(n.endswith(".yaml") for n in names if n != WRITTEN_LIST) and len(names) > 3


def test_render_into_a_new_dir_creates_only_that_dir(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "out"
    assert main(["render", STACK, "-o", str(target), "-q"]) == 0
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_dir()) == ["a", "b", "out"]


def test_render_to_stdout_writes_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    touched = _watch_writes(monkeypatch)
    assert main(["render", STACK]) == 0
    assert capsys.readouterr().out.startswith("---\n")
    assert touched == [] and list(tmp_path.iterdir()) == []


def _fail_on_call(
    number: int, error: BaseException, real: Callable[..., Any]
) -> Callable[..., Any]:
    """``real``, but raising ``error`` on its ``number``-th call."""
    calls = {"n": 0}

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == number:
            raise error
        return real(*args, **kwargs)

    return wrapped


@pytest.mark.parametrize("failing_file", [1, 3, 10])
def test_a_file_that_cannot_be_written_leaves_everything_as_it_was(
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    failing_file: int,
) -> None:
    before = _tree(workspace)
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(
        "trainjobs.output.folder._stage", _fail_on_call(failing_file, full, folder._stage)
    )
    assert main(["render", STACK, "-o", str(workspace / "out")]) == 2
    err = capsys.readouterr().err
    assert "No space left on device; nothing was written" in err
    assert "Traceback" not in err
    assert _tree(workspace) == before


def test_a_failed_rename_before_the_list_leaves_everything_as_it_was(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _tree(workspace)
    real = os.replace

    def replace(src: Any, dst: Any) -> None:
        # Writing the interim list of written files is the last step before any file moves.
        if Path(dst).name == WRITTEN_LIST:
            raise OSError(errno.EXDEV, os.strerror(errno.EXDEV))
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    assert main(["render", STACK, "-o", str(workspace / "out")]) == 2
    assert "nothing was written" in capsys.readouterr().err
    assert _tree(workspace) == before


def test_an_interrupt_while_writing_leaves_everything_as_it_was(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _tree(workspace)
    monkeypatch.setattr(
        "trainjobs.cli.render.dump_one", _fail_on_call(2, KeyboardInterrupt(), dump_one)
    )
    assert main(["render", STACK, "-o", str(workspace / "out")]) == 130
    assert capsys.readouterr().err.strip() == "interrupted"
    assert _tree(workspace) == before


def test_output_that_is_a_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "out"
    target.write_text("a file, not a folder\n")
    assert main(["render", STACK, "-o", str(target)]) == 2
    assert capsys.readouterr().err == (
        f"error: {target} is not a directory; nothing was written. Name another path, or "
        "move what is there away\n"
    )
    assert target.read_text() == "a file, not a folder\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
