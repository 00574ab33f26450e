"""Hostile input that is not a stack: render outputs given to ``diff``, stdin, the
stored render ``preview`` reads back, output folders and the arguments themselves.

Same bounds as :mod:`tests.hostile.test_input_cases`: exit 2, a message, no traceback,
bounded CPU and memory, and no file changed but the command's own output.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.hostile.harness import TreeState, assert_refused, run_cli
from tests.hostile.test_input_cases import JOB, laughs
from tests.support.paths import ROOT

POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec: {containers: []}\n"
"""A rendered object, as ``render`` prints it."""

# diff OLD NEW: render outputs (files, folders or -); the second side is always a good one.
DIFF_SIDES: dict[str, tuple[dict[str, str | bytes], str, tuple[str, ...]]] = {
    "dev-zero": ({}, "/dev/zero", ("/dev/zero",)),
    "missing": ({}, "nope.yaml", ("no such file",)),
    "binary": ({"old.yaml": b"\x00\x01"}, "old.yaml", ("binary",)),
    "latin1": ({"old.yaml": b"a: \xe9\n"}, "old.yaml", ("UTF-8",)),
    "huge": ({"old.yaml": "a: " + "x" * (9 << 20)}, "old.yaml", ("TRAINJOBS_MAX_FILE_BYTES",)),
    "laughs": ({"old.yaml": laughs(9)}, "old.yaml", ("TRAINJOBS_MAX_YAML_NODES",)),
    "deep": ({"old.yaml": "a: " + "[" * 3000 + "]" * 3000}, "old.yaml", ("DEPTH",)),
    "duplicate-key": (
        {"old.yaml": POD.replace("name: p,", "name: p, name: q,")},
        "old.yaml",
        ("duplicate key",),
    ),
    "syntax": ({"old.yaml": "a: [\n"}, "old.yaml", ("invalid YAML",)),
    "scalar": ({"old.yaml": "just text\n"}, "old.yaml", ("old.yaml",)),
    "no-name": ({"old.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {}\n"}, "old.yaml", ("name",)),
    "twice": ({"old.yaml": POD + "---\n" + POD}, "old.yaml", ("twice",)),
    "folder-with-bad-file": (
        {"out/0000-pod.yaml": POD, "out/0001-pod.yaml": laughs(9)},
        "out",
        ("TRAINJOBS_MAX_YAML_NODES",),
    ),
}


@pytest.mark.parametrize("name", sorted(DIFF_SIDES))
def test_diff_refuses_a_bad_render_output(tmp_path: Path, name: str) -> None:
    files, old, fragments = DIFF_SIDES[name]
    for rel, content in {**files, "new.yaml": POD}.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    before = TreeState.of(tmp_path)
    assert_refused(run_cli(["diff", old, "new.yaml"], tmp_path), *fragments)
    assert before.changes(TreeState.of(tmp_path)) == []


def test_diff_refuses_a_fifo_in_a_render_folder(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    os.mkfifo(tmp_path / "out" / "0000-pod.yaml")
    (tmp_path / "new.yaml").write_text(POD)
    # A FIFO in a folder is passed over (only regular files are read), never waited on.
    outcome = run_cli(["diff", "out", "new.yaml"], tmp_path)
    assert not outcome.hung
    assert outcome.code in (1, 2), outcome.stderr


STDIN: dict[str, tuple[bytes | Path, tuple[str, ...]]] = {
    "endless-zeros": (Path("/dev/zero"), ("TRAINJOBS_MAX_FILE_BYTES",)),
    "endless-random": (Path("/dev/urandom"), ("-",)),
    "huge-yaml": (b"a: " + b"x" * (9 << 20), ("TRAINJOBS_MAX_FILE_BYTES",)),
    "laughs": (laughs(9).encode(), ("TRAINJOBS_MAX_YAML_NODES",)),
    "binary": (b"\x00" * 100, ("binary",)),
    "not-utf8": (b"\xff\xfe", ("UTF-8",)),
    "duplicate": (POD.replace("kind: Pod", "kind: Pod\nkind: Pod").encode(), ("duplicate",)),
}


@pytest.mark.parametrize("name", sorted(STDIN))
def test_diff_reads_stdin_within_bounds(tmp_path: Path, name: str) -> None:
    stdin, fragments = STDIN[name]
    (tmp_path / "new.yaml").write_text(POD)
    outcome = run_cli(["diff", "-", "new.yaml"], tmp_path, stdin=stdin)
    assert_refused(outcome, *fragments)


def _stack(tmp_path: Path) -> Path:
    (tmp_path / "job.yaml").write_text(JOB)
    return tmp_path / "job.yaml"


DAMAGED: dict[str, Callable[[Path], object]] = {
    "syntax": lambda p: p.write_text("a: [\n"),
    "binary": lambda p: p.write_bytes(b"\x00\x01"),
    "latin1": lambda p: p.write_bytes(b"kind: \xe9\n"),
    "laughs": lambda p: p.write_text(laughs(9)),
    "duplicate": lambda p: p.write_text(POD.replace("kind: Pod", "kind: Pod\nkind: Pod")),
    "scalar": lambda p: p.write_text("hello\n"),
    "directory": lambda p: p.mkdir(),
    "fifo": lambda p: os.mkfifo(p),
    "huge": lambda p: p.write_text("a: " + "x" * (9 << 20)),
    "link-to-zero": lambda p: p.symlink_to("/dev/zero"),
}


@pytest.mark.parametrize("name", sorted(DAMAGED))
def test_preview_refuses_a_damaged_last_render(tmp_path: Path, name: str) -> None:
    stack = _stack(tmp_path)
    state = tmp_path / "state"
    stored = state / "job" / "last.yaml"
    stored.parent.mkdir(parents=True)
    DAMAGED[name](stored)
    before = TreeState.of(tmp_path)
    outcome = run_cli(["preview", "--state-dir", str(state), str(stack)], tmp_path)
    assert_refused(outcome, "stored render is damaged", "delete")
    assert before.changes(TreeState.of(tmp_path)) == []


ARGUMENTS: dict[str, tuple[list[str], tuple[str, ...]]] = {
    "render-nul-path": (["render", "a\0b.yaml"], ("NUL",)),
    "check-nul-path": (["check", "job.yaml", "x\0y"], ("NUL",)),
    "graph-nul-output": (["graph", "job.yaml", "-o", "g\0.mmd"], ("NUL",)),
    "crds-nul-output": (["crds", "-o", "c\0rds"], ("NUL",)),
    "render-nul-output": (["render", "job.yaml", "-o", "o\0ut"], ("NUL",)),
    "preview-nul-state": (["preview", "--state-dir", "s\0", "job.yaml"], ("NUL",)),
    "run-local-nul-job": (["run-local", "--job", "m\0", "job.yaml"], ("NUL",)),
    "diff-nul-side": (["diff", "a\0", "job.yaml"], ("NUL",)),
    "render-output-is-a-file": (["render", "job.yaml", "-o", "job.yaml"], ("job.yaml",)),
    "crds-output-is-a-file": (["crds", "-o", "job.yaml"], ("job.yaml",)),
    "graph-output-in-a-file": (["graph", "job.yaml", "-o", "job.yaml/g.mmd"], ("job.yaml",)),
    "render-output-under-dev-null": (["render", "job.yaml", "-o", "/dev/null/out"], ("/dev/null",)),
    "crds-output-under-proc": (["crds", "-o", "/proc/self/nope"], ("/proc",)),
    "k8s-version-unknown": (["check", "--k8s-version", "9.99", "job.yaml"], ("9.99",)),
    "limit-zero": (["render", "job.yaml"], ("positive",)),
}


@pytest.mark.parametrize("name", sorted(ARGUMENTS))
def test_bad_arguments_and_output_places_are_refused(tmp_path: Path, name: str) -> None:
    argv, fragments = ARGUMENTS[name]
    _stack(tmp_path)
    env = {"TRAINJOBS_MAX_YAML_DEPTH": "0"} if name == "limit-zero" else None
    before = TreeState.of(tmp_path)
    outcome = run_cli(argv, tmp_path, env=env)
    assert_refused(outcome, *fragments)
    assert before.changes(TreeState.of(tmp_path)) == []


def test_an_unwritable_output_folder_is_refused(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("running as root: a folder without write permission is still writable")
    _stack(tmp_path)
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        outcome = run_cli(["render", "job.yaml", "-o", "locked/out"], tmp_path)
    finally:
        locked.chmod(0o700)
    assert_refused(outcome, "locked")


def test_the_examples_still_render_within_the_bounds(tmp_path: Path) -> None:
    # The limits are above what a real stack meets: the demo stack renders under them.
    outcome = run_cli(["render", "-q", str(ROOT / "stacks" / "Pulumi.demo.yaml")], tmp_path)
    assert outcome.code == 0, outcome.stderr
    assert "kind: TFJob" in outcome.stdout


def test_diff_against_a_ref_refuses_a_huge_file_in_history(tmp_path: Path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text("a: " + "x" * (5 << 20) + "\n")
    git = "git -C {} -c user.email=t@t -c user.name=t {}"
    assert not os.system(git.format(tmp_path, "init -q") + " && " + git.format(tmp_path, "add -A"))
    assert not os.system(git.format(tmp_path, "commit -qm big"))
    job.write_text(JOB)
    before = TreeState.of(tmp_path, [".git"])
    outcome = run_cli(["diff", "--against", "HEAD", "job.yaml"], tmp_path)
    assert_refused(outcome, "HEAD:job.yaml", "TRAINJOBS_MAX_FILE_BYTES")
    assert before.changes(TreeState.of(tmp_path, [".git"])) == []
