"""Same input, byte-identical output, wherever CI runs it.

A CI pipeline snapshot-tests what ``trainjobs render`` writes on runners that differ
from the laptop the snapshot was made on. Each test here runs every example and stack
through every output command (``render`` to stdout and ``-o DIR``, ``check --output
json``, ``graph`` as Mermaid and DOT, ``diff --json``, ``crds``; see
tests/support/determinism.py) in a fresh interpreter under one changed environment and
compares every byte with a run under a plain one:

* the hash seed (set iteration order must never reach output), the time zone (no
  timestamps), the terminal width, HOME;
* the locale and the stdout encoding (a Latin-9 locale or a Windows code page);
* the path form: absolute, through a symbolic link to the repository, from another
  working folder (a message names the path as it was given; nothing written does);
* the umask: written files get ``0666`` less the umask and new folders ``0777`` less it,
  as README's "Output folders" states; their content does not change.

The variants run in parallel, once for the module.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import tempfile
import tty
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.corpus import Example, examples
from tests.support.paths import ROOT, example_job_files, stack_files, unfit_stack_files
from tests.support.strategies import with_names, with_namespace
from trainjobs.k8s.yamlio import dump_all

INPUTS = [
    p.relative_to(ROOT).as_posix()
    for p in [*example_job_files(), *stack_files(), *unfit_stack_files()]
]

Record = dict[str, dict[str, Any]]


def _env(changes: Mapping[str, str | None]) -> dict[str, str]:
    """This environment with ``changes`` (None: unset), the tree under test first on the
    path, and a fixed baseline for everything a variant may change."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "PYTHONIO"))}
    env.update(
        PYTHONPATH=os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])]),
        PYTHONHASHSEED="0",
        LANG="C.UTF-8",
        TZ="UTC",
    )
    for key in ("COLUMNS", "NO_COLOR", "FORCE_COLOR"):
        env.pop(key, None)
    for key, value in changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def _latin_locale() -> str | None:
    """A Turkish (else any) ISO-8859 locale this machine has, if any."""
    try:
        names = subprocess.run(["locale", "-a"], capture_output=True, text=True).stdout.split()
    except OSError:
        return None
    latin = [n for n in names if "8859" in n.replace("-", "")]
    return next((n for n in latin if n.startswith("tr_")), latin[0] if latin else None)


class _Variant:
    """One run of tests/support/determinism.py under changed environment variables, a
    working folder, an input path prefix and a umask."""

    def __init__(
        self,
        out: Path,
        changes: Mapping[str, str | None] | None = None,
        cwd: Path = ROOT,
        prefix: str = "",
        umask: int = 0o022,
        inputs: Sequence[str] = INPUTS,
        render_only: bool = False,
    ) -> None:
        self.out = out
        argv = ["--prefix", prefix, *(["--render-only"] if render_only else []), "--", *inputs]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.support.determinism", str(out), *argv],
            cwd=cwd,
            env=_env(changes or {}),
            umask=umask,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )

    def record(self) -> Record:
        output, _ = self.process.communicate(timeout=300)
        assert self.process.returncode == 0, output.decode(errors="replace")
        loaded: Record = json.loads((self.out / "record.json").read_text(encoding="utf-8"))
        return loaded


@pytest.fixture(scope="module")
def variants(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Record]:
    tmp = tmp_path_factory.mktemp("determinism")
    link = tmp / "checkout"
    link.symlink_to(ROOT, target_is_directory=True)
    elsewhere = tmp / "elsewhere"
    elsewhere.mkdir()
    locale = _latin_locale() or "C"
    started = {
        "plain": _Variant(tmp / "plain", {"HOME": str(tmp)}),
        "seed-tz-width-home": _Variant(
            tmp / "seed",
            {"PYTHONHASHSEED": "1", "TZ": "Pacific/Kiritimati", "COLUMNS": "40", "HOME": None},
        ),
        # Whether or not the machine has a Latin locale, the stdout encoding is one.
        "locale": _Variant(
            tmp / "locale",
            {
                "PYTHONHASHSEED": "2",
                "LC_ALL": locale,
                "PYTHONIOENCODING": "iso8859-9",
                "PYTHONWARNDEFAULTENCODING": "1",
            },
        ),
        "path-umask": _Variant(
            tmp / "path",
            {"PYTHONHASHSEED": "3", "COLUMNS": "400"},
            cwd=elsewhere,
            prefix=f"{link}/",
            umask=0o077,
        ),
    }
    return {name: variant.record() for name, variant in started.items()}


def _differences(plain: Record, other: Record, fields: tuple[str, ...]) -> list[str]:
    found = []
    for key in sorted(set(plain) | set(other)):
        a, b = plain.get(key), other.get(key)
        if a is None or b is None:
            found.append(f"{key}: only in {'the variant' if a is None else 'the plain run'}")
            continue
        for field in fields:
            if a.get(field) != b.get(field):
                found.append(f"{key}: {field} {a.get(field)} -> {b.get(field)}; {b.get('stderr')}")
    return found


CONTENT = ("exit", "stdout", "sha256")


def test_the_plain_run_covers_every_input_and_command(variants: dict[str, Record]) -> None:
    plain = variants["plain"]
    for name in INPUTS:
        expected = 2 if "unfit" in name else 0
        assert plain[f"render/{name}"]["exit"] == expected, plain[f"render/{name}"]["stderr"]
        assert plain[f"check/{name}"]["exit"] == expected
    files = [k for k in plain if k.startswith("render-o/") and "mode" in plain[k]]
    assert len(files) > len(INPUTS)
    assert plain["crds"]["exit"] == 0
    assert [k for k in plain if k.startswith("diff/")]


def test_hash_seed_time_zone_terminal_width_and_home_change_no_byte(
    variants: dict[str, Record],
) -> None:
    assert _differences(variants["plain"], variants["seed-tz-width-home"], CONTENT) == []


def test_a_latin_locale_and_stdout_encoding_change_no_byte(variants: dict[str, Record]) -> None:
    """Before stdout was made UTF-8, ``crds`` and the render of a stack with a CRD died
    half-way (exit 3) at the first character Latin-9 lacks."""
    assert _differences(variants["plain"], variants["locale"], CONTENT) == []


def test_the_path_form_and_working_folder_change_no_byte(variants: dict[str, Record]) -> None:
    assert _differences(variants["plain"], variants["path-umask"], CONTENT) == []


def test_written_files_get_0666_and_folders_0777_less_the_umask(
    variants: dict[str, Record],
) -> None:
    for name, files, folders in (
        ("plain", "0o100644", "0o40755"),
        ("path-umask", "0o100600", "0o40700"),
    ):
        modes = {v["mode"] for k, v in variants[name].items() if "mode" in v}
        assert modes == {files, folders}, name


@pytest.mark.parametrize("encoding", ["cp1252", "iso8859-9", "ascii"])
def test_stdout_is_utf8_under_any_stdout_encoding(encoding: str) -> None:
    """A Windows runner's code page, or a Latin locale: ``crds`` (CRD descriptions hold
    "…" and "—") ran to its first such character and died, exit 3, half its YAML out."""

    def crds(env: Mapping[str, str | None]) -> subprocess.CompletedProcess[bytes]:
        argv = [sys.executable, "-m", "trainjobs", "crds"]
        return subprocess.run(argv, cwd=ROOT, env=_env(env), capture_output=True)

    plain, other = crds({}), crds({"PYTHONIOENCODING": encoding})
    assert (plain.returncode, other.returncode) == (0, 0), other.stderr.decode(errors="replace")
    assert not plain.stdout.isascii()  # else this would prove nothing
    assert other.stdout == plain.stdout


def test_a_folder_name_that_is_not_utf8_is_printed_as_given(tmp_path: Path) -> None:
    """Under a strict UTF-8 stdout (tr_TR.UTF-8, PYTHONIOENCODING=utf-8) the summary line
    of ``render -o`` died, exit 3, after the files were written."""
    folder = os.fsencode(tmp_path) + b"/out\xff"
    argv = [sys.executable, "-m", "trainjobs", "render", "examples/tf-mnist/tfjob.yaml"]
    env = _env({"PYTHONIOENCODING": "utf-8"})
    done = subprocess.run([*argv, "-o", folder], cwd=ROOT, env=env, capture_output=True)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert done.stdout.endswith(b" to " + folder + b"/\n")


def _on_a_terminal(argv: list[str]) -> bytes:
    """What ``trainjobs ARGV`` prints when its stdout is a terminal (raw: no CR added)."""
    leader, follower = pty.openpty()
    tty.setraw(follower)
    with subprocess.Popen(
        [sys.executable, "-m", "trainjobs", *argv],
        cwd=ROOT,
        env=_env({"TERM": "xterm-256color"}),
        stdout=follower,
        stderr=subprocess.DEVNULL,
    ) as process:
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 1 << 16)
            except OSError:  # the terminal closed: the command has ended
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert process.wait(timeout=60) == 0
    os.close(leader)
    return b"".join(chunks)


@pytest.mark.parametrize(
    "argv",
    [
        ["render", "stacks/Pulumi.demo.yaml"],
        ["check", "--output", "json", "stacks/Pulumi.demo.yaml"],
    ],
    ids=["render", "check-json"],
)
def test_a_terminal_colours_no_yaml_or_json(argv: list[str]) -> None:
    piped = subprocess.run(
        [sys.executable, "-m", "trainjobs", *argv], cwd=ROOT, env=_env({}), capture_output=True
    )
    assert piped.returncode == 0
    assert _on_a_terminal(argv) == piped.stdout


def test_two_renders_in_parallel_write_the_same_files(tmp_path: Path) -> None:
    def start(folder: Path) -> subprocess.Popen[bytes]:
        argv = ["render", "-q", "stacks/Pulumi.demo.yaml", "-o", str(folder)]
        return subprocess.Popen([sys.executable, "-m", "trainjobs", *argv], cwd=ROOT, env=_env({}))

    runs = [start(tmp_path / "a"), start(tmp_path / "b")]
    assert [r.wait(timeout=120) for r in runs] == [0, 0]

    def files(folder: Path) -> Iterator[tuple[str, bytes]]:
        for path in sorted(folder.iterdir()):
            yield path.name, path.read_bytes()

    assert list(files(tmp_path / "a")) == list(files(tmp_path / "b"))


_LABEL = st.from_regex(r"[a-z][a-z0-9]{0,9}", fullmatch=True)


@st.composite
def _renamed(draw: st.DrawFn) -> list[dict[str, Any]]:
    """An example's documents with its jobs renamed and moved to another namespace."""
    example: Example = draw(st.sampled_from(examples()))
    docs = example.copy_docs()
    with_names(docs, draw(_LABEL))
    with_namespace(docs, draw(_LABEL))
    return docs


@settings(max_examples=1, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files=st.lists(_renamed(), min_size=6, max_size=6))
def test_other_names_meet_other_hash_orders_and_change_no_byte(
    files: list[list[dict[str, Any]]],
) -> None:
    """Names and namespaces drawn afresh put set members in other hash buckets than the
    examples' own: two hash seeds still render the same bytes."""
    with tempfile.TemporaryDirectory() as temporary:
        tmp = Path(temporary)
        inputs = []
        for index, docs in enumerate(files):
            path = tmp / f"input-{index}.yaml"
            path.write_text(dump_all(docs), encoding="utf-8")
            inputs.append(str(path))
        started = [
            _Variant(
                tmp / f"seed-{seed}", {"PYTHONHASHSEED": seed}, inputs=inputs, render_only=True
            )
            for seed in ("4", "5")
        ]
        first, second = (variant.record() for variant in started)
    assert [first[f"render/{i}"]["exit"] for i in inputs] == [0] * len(inputs)
    assert _differences(first, second, CONTENT) == []
