"""Rule 1 of issue 14: never delete (or replace) what trainjobs did not write.

Each case prepares a folder as a careless or hostile user could leave it, runs the
real CLI and asserts the refusal: exit 2, a message naming the problem and the way
out, no traceback, bounded cost — and not one byte changed in the whole tree the
case lives in (``TreeState``), links not followed.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.hostile.harness import Outcome, TreeState, assert_bounded, assert_refused, run_cli
from tests.hostile.jobs import JOB
from trainjobs.cli.frameworks import CRD_MARK
from trainjobs.errors import TrainjobsError
from trainjobs.frameworks.crds import GENERATED_DIR, crd_files
from trainjobs.local.run import write_files
from trainjobs.local.volumes import FileSpec
from trainjobs.output import WRITTEN_LIST

RENDERED = "0000-tfjob-training-mnist.yaml"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A user's working folder: the job, notes, and a victim folder outside every output."""
    (tmp_path / "job.yaml").write_text(JOB)
    (tmp_path / "notes.txt").write_text("my notes\n")
    (tmp_path / "victim").mkdir()
    (tmp_path / "victim" / "precious.yaml").write_text("kind: Precious\n")
    return tmp_path


def _refused_untouched(home: Path, argv: list[str], *fragments: str) -> Outcome:
    before = TreeState.of(home)
    outcome = run_cli(argv, home)
    assert_refused(outcome, *fragments)
    assert before.changes(TreeState.of(home)) == []
    return outcome


# --- render -o DIR --------------------------------------------------------------------


def _render_into(home: Path) -> Path:
    out = home / "out"
    assert run_cli(["render", "job.yaml", "-o", "out", "-q"], home).code == 0
    return out


Setup = Callable[[Path], str]
"""Prepares ``home`` and returns the -o argument."""


def _cwd(home: Path) -> str:
    return "."


def _user_file(home: Path) -> str:
    (home / "out").mkdir()
    (home / "out" / "README.md").write_text("mine\n")
    return "out"


def _gitkeep(home: Path) -> str:
    (home / "out").mkdir()
    (home / "out" / ".gitkeep").write_text("")
    return "out"


def _subfolder(home: Path) -> str:
    (home / "out" / "base").mkdir(parents=True)
    return "out"


def _old_style_render(home: Path) -> str:
    (home / "out").mkdir()
    (home / "out" / RENDERED).write_text("kind: TFJob\n")  # no list: not provably ours
    return "out"


def _edited_render(home: Path) -> str:
    out = _render_into(home)
    with (out / RENDERED).open("a") as handle:
        handle.write("# my edit\n")
    return "out"


def _link_to_file_outside(home: Path) -> str:
    out = _render_into(home)
    (out / "0001-pod-training-x.yaml").symlink_to(home / "victim" / "precious.yaml")
    return "out"


def _listed_name_is_now_a_link(home: Path) -> str:
    out = _render_into(home)
    (out / RENDERED).unlink()
    (out / RENDERED).symlink_to(home / "victim" / "precious.yaml")
    return "out"


def _link_to_folder_outside(home: Path) -> str:
    out = _render_into(home)
    (out / "more").symlink_to(home / "victim")
    return "out"


def _dir_is_a_link(home: Path) -> str:
    (home / "out").symlink_to(home / "victim")
    return "out"


def _dir_is_a_file(home: Path) -> str:
    (home / "out").write_text("a file\n")
    return "out"


def _list_names_a_file_outside(home: Path) -> str:
    out = _render_into(home)
    digest = "0" * 64
    (out / WRITTEN_LIST).write_text(f"{digest}  ../notes.txt\n")
    return "out"


def _list_is_garbage(home: Path) -> str:
    out = _render_into(home)
    (out / WRITTEN_LIST).write_text("rm -rf /\n")
    return "out"


def _list_is_a_link(home: Path) -> str:
    out = _render_into(home)
    (out / WRITTEN_LIST).unlink()
    (out / WRITTEN_LIST).symlink_to(home / "victim" / "precious.yaml")
    return "out"


def _list_is_a_folder(home: Path) -> str:
    out = _render_into(home)
    (out / WRITTEN_LIST).unlink()
    (out / WRITTEN_LIST).mkdir()
    return "out"


def _list_claims_a_user_file(home: Path) -> str:
    out = _render_into(home)
    (out / "mine.txt").write_text("mine\n")
    # A forged entry with the wrong digest claims the user's file: it is still not ours.
    with (out / WRITTEN_LIST).open("a") as handle:
        handle.write(f"{'a' * 64}  mine.txt\n")
    return "out"


def _staging_left_behind(home: Path) -> str:
    out = _render_into(home)
    (out / ".trainjobs-staging.x").mkdir()
    return "out"


RENDER_CASES: dict[str, tuple[Setup, tuple[str, ...]]] = {
    "render -o . (the working folder)": (_cwd, ("did not write: job.yaml, notes.txt", "empty")),
    "a file of the user's": (_user_file, ("README.md", "--allow-other-files")),
    "a .gitkeep": (_gitkeep, (".gitkeep", "nothing deleted")),
    "a subfolder": (_subfolder, ("did not write: base",)),
    "a render from before the written list": (_old_style_render, (RENDERED,)),
    "a rendered file edited since": (_edited_render, ("changed since", RENDERED)),
    "a link to a file outside": (_link_to_file_outside, ("0001-pod-training-x.yaml",)),
    "a listed name that is now a link": (_listed_name_is_now_a_link, (RENDERED,)),
    "a link to a folder outside": (_link_to_folder_outside, ("did not write: more",)),
    "DIR is a symbolic link": (_dir_is_a_link, ("is a symbolic link", "never through a link")),
    "DIR is a file": (_dir_is_a_file, ("is not a directory",)),
    "the list names ../notes.txt": (_list_names_a_file_outside, ("line 1", WRITTEN_LIST)),
    "the list is garbage": (_list_is_garbage, ("is not '<sha256>  <file name>'",)),
    "the list is a link": (_list_is_a_link, ("is not the list of files",)),
    "the list is a folder": (_list_is_a_folder, ("is not the list of files",)),
    "a forged list entry for a user file": (_list_claims_a_user_file, ("mine.txt",)),
    "a staging folder left behind": (
        _staging_left_behind,
        (".trainjobs-staging.x", "interrupted run; delete them"),
    ),
}


@pytest.mark.parametrize("case", list(RENDER_CASES), ids=list(RENDER_CASES))
def test_render_refuses_a_folder_it_cannot_prove_is_its_own(home: Path, case: str) -> None:
    setup, fragments = RENDER_CASES[case]
    target = setup(home)
    _refused_untouched(home, ["render", "job.yaml", "-o", target], *fragments)
    assert (home / "victim" / "precious.yaml").read_text() == "kind: Precious\n"


def test_allow_other_files_never_replaces_a_user_file_of_the_same_name(home: Path) -> None:
    out = home / "out"
    out.mkdir()
    (out / RENDERED).write_text("mine\n")
    _refused_untouched(
        home,
        ["render", "job.yaml", "-o", "out", "--allow-other-files"],
        "already holds " + RENDERED,
        "trainjobs did not write",
    )


def test_allow_other_files_writes_beside_and_keeps_them(home: Path) -> None:
    _user_file(home)
    (home / "out" / "sub").mkdir()
    outcome = run_cli(["render", "job.yaml", "-o", "out", "--allow-other-files", "-q"], home)
    assert_bounded(outcome)
    assert outcome.code == 0, outcome.stderr
    assert sorted(p.name for p in (home / "out").iterdir()) == [
        WRITTEN_LIST,
        RENDERED,
        "README.md",
        "sub",
    ]
    assert (home / "out" / "README.md").read_text() == "mine\n"


def test_a_second_render_removes_only_files_the_first_wrote(home: Path) -> None:
    out = _render_into(home)
    other = JOB.replace("name: mnist", "name: other")
    (home / "job.yaml").write_text(other)
    before = TreeState.of(home, skip=["out", "job.yaml"])
    outcome = run_cli(["render", "job.yaml", "-o", "out"], home)
    assert_bounded(outcome)
    assert outcome.code == 0, outcome.stderr
    assert "removed 1 it wrote before" in outcome.stdout
    assert sorted(p.name for p in out.iterdir()) == [
        WRITTEN_LIST,
        "0000-tfjob-training-other.yaml",
    ]
    assert before.changes(TreeState.of(home, skip=["out", "job.yaml"])) == []


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_output_files_get_the_mode_open_would_give(home: Path, umask: int, mode: int) -> None:
    old = os.umask(umask)
    try:
        _render_into(home)
        assert run_cli(["graph", "job.yaml", "-o", "g.mmd", "-q"], home).code == 0
    finally:
        os.umask(old)
    for path in [*(home / "out").iterdir(), home / "g.mmd"]:
        assert stat.S_IMODE(path.stat().st_mode) == mode, path


# --- graph -o FILE --------------------------------------------------------------------


def _graph_user_file(name: str) -> Setup:
    def setup(home: Path) -> str:
        (home / name).write_text("# my own notes\n")
        return name

    return setup


def _graph_link(home: Path) -> str:
    (home / "g.mmd").symlink_to(home / "victim" / "precious.yaml")
    return "g.mmd"


def _graph_dangling_link(home: Path) -> str:
    (home / "g.dot").symlink_to(home / "victim" / "new.dot")
    return "g.dot"


def _graph_folder(home: Path) -> str:
    (home / "g.mmd").mkdir()
    return "g.mmd"


def _graph_parent_link(home: Path) -> str:
    (home / "pictures").symlink_to(home / "victim")
    return "pictures/g.mmd"


GRAPH_CASES: dict[str, tuple[Setup, tuple[str, ...]]] = {
    "a user's notes.md": (
        _graph_user_file("notes.md"),
        ("trainjobs did not write it", "--overwrite"),
    ),
    "a user's .mmd": (_graph_user_file("g.mmd"), ("trainjobs did not write it",)),
    "a user's .dot": (_graph_user_file("g.dot"), ("trainjobs did not write it",)),
    "a user's .svg": (_graph_user_file("g.svg"), ("trainjobs did not write it",)),
    "a link to a file outside": (_graph_link, ("is a symbolic link",)),
    "a dangling link": (_graph_dangling_link, ("is a symbolic link",)),
    "a folder": (_graph_folder, ("is not a regular file",)),
    "a folder that is a link": (_graph_parent_link, ("is a symbolic link",)),
}


@pytest.mark.parametrize("case", list(GRAPH_CASES), ids=list(GRAPH_CASES))
def test_graph_replaces_only_a_file_it_drew(home: Path, case: str) -> None:
    setup, fragments = GRAPH_CASES[case]
    target = setup(home)
    _refused_untouched(home, ["graph", "job.yaml", "-o", target], *fragments)
    assert not (home / "victim" / "new.dot").exists()


@pytest.mark.parametrize("suffix", [".mmd", ".md", ".dot"])
def test_graph_replaces_its_own_file_and_overwrite_replaces_any(home: Path, suffix: str) -> None:
    target = f"g{suffix}"
    for _ in range(2):  # the second run replaces the file the first drew
        outcome = run_cli(["graph", "job.yaml", "-o", target], home)
        assert_bounded(outcome)
        assert outcome.code == 0, outcome.stderr
    (home / target).write_text("mine\n")
    assert run_cli(["graph", "job.yaml", "-o", target, "--overwrite", "-q"], home).code == 0
    assert "drawn by trainjobs graph" in (home / target).read_text()


# --- crds -o DIR ----------------------------------------------------------------------


def _crds_user_file(home: Path) -> str:
    first = next(iter(crd_files()))
    (home / "crds" / first).parent.mkdir(parents=True)
    (home / "crds" / first).write_text("my hand-written CRD\n")
    return "crds"


def _crds_generated_link(home: Path) -> str:
    (home / "crds").mkdir()
    (home / "crds" / GENERATED_DIR).symlink_to(home / "victim")
    return "crds"


def _crds_file_link(home: Path) -> str:
    first = next(iter(crd_files()))
    (home / "crds" / first).parent.mkdir(parents=True)
    (home / "crds" / first).symlink_to(home / "victim" / "precious.yaml")
    return "crds"


CRDS_CASES: dict[str, tuple[Setup, tuple[str, ...]]] = {
    "a CRD file trainjobs did not write": (_crds_user_file, ("trainjobs did not write it",)),
    "generated/ is a link": (_crds_generated_link, ("is a symbolic link",)),
    "a CRD file that is a link": (_crds_file_link, ("is a symbolic link",)),
}


@pytest.mark.parametrize("case", list(CRDS_CASES), ids=list(CRDS_CASES))
def test_crds_replaces_only_files_it_generated(home: Path, case: str) -> None:
    setup, fragments = CRDS_CASES[case]
    target = setup(home)
    _refused_untouched(home, ["crds", "-o", target], *fragments)


def test_crds_removes_only_stale_files_holding_its_mark(home: Path) -> None:
    generated = home / "crds" / GENERATED_DIR
    generated.mkdir(parents=True)
    (generated / "gone.example.org.yaml").write_text(f"# {CRD_MARK} from Old.\n")
    (generated / "mine.example.org.yaml").write_text("mine\n")
    (generated / "README.md").write_text(f"# {CRD_MARK}\n")  # not a CRD file
    outcome = run_cli(["crds", "-o", "crds"], home)
    assert_bounded(outcome)
    assert outcome.code == 0, outcome.stderr
    names = sorted(p.name for p in generated.iterdir())
    assert "gone.example.org.yaml" not in names
    assert "mine.example.org.yaml" in names and "README.md" in names


# --- preview's state ------------------------------------------------------------------


def _stack_file(home: Path, name: str) -> str:
    (home / "Pulumi.yaml").write_text("name: p\nruntime: python\n")
    path = home / f"Pulumi.{name}.yaml"
    path.write_text("config:\n  trainjobs:jobs:\n    - file: job.yaml\n")
    return path.name


@pytest.mark.parametrize(
    "stack",
    ["..", ".", ".hidden", "a b", "tab\there", "new\nline", "esc\x1b[2J", "-", "x" * 101],
    ids=["dotdot", "dot", "hidden", "space", "tab", "newline", "escape", "dash-ok", "too-long"],
)
def test_a_stack_name_never_leaves_the_state_folder(home: Path, stack: str) -> None:
    name = _stack_file(home, stack)
    if stack == "-":  # a plain name: stored in its own folder under .trainjobs/
        outcome = run_cli(["preview", name, "-q"], home)
        assert outcome.code == 1, outcome.stderr
        assert (home / ".trainjobs" / "-" / "last.yaml").is_file()
        return
    outcome = _refused_untouched(home, ["preview", name], "cannot name a folder", "rename")
    assert "\x1b" not in outcome.stderr and "\t" not in outcome.stderr


def _state_link(part: str) -> Callable[[Path], None]:
    def setup(home: Path) -> None:
        state = home / ".trainjobs"
        if part == ".trainjobs":
            state.symlink_to(home / "victim")
            return
        (state / "job").mkdir(parents=True)
        if part == "job":
            (state / "job").rmdir()
            (state / "job").symlink_to(home / "victim")
        else:
            (state / "job" / part).symlink_to(home / "victim" / "precious.yaml")

    return setup


@pytest.mark.parametrize("part", [".trainjobs", "job", "last.yaml", "key"])
def test_preview_state_is_never_read_or_written_through_a_link(home: Path, part: str) -> None:
    _state_link(part)(home)
    outcome = _refused_untouched(home, ["preview", "job.yaml"], "is a symbolic link", "preview")
    assert "Precious" not in outcome.stderr + outcome.stdout


@pytest.mark.parametrize(
    "content",
    [b"a: [\n", b"- 1\n- 2\n", b"kind: Pod\n", b"\xff\xfe\x00", b"apiVersion: v1\nkind: Pod\n"],
    ids=["syntax", "list", "no-apiversion", "binary", "no-name"],
)
def test_a_damaged_stored_preview_is_bad_input_with_the_way_out(home: Path, content: bytes) -> None:
    (home / ".trainjobs" / "job").mkdir(parents=True)
    (home / ".trainjobs" / "job" / "last.yaml").write_bytes(content)
    _refused_untouched(home, ["preview", "job.yaml"], "preview again")


@pytest.mark.parametrize("git", [True, False], ids=["clone", "unpacked-release"])
def test_preview_of_an_example_writes_nothing_under_examples(tmp_path: Path, git: bool) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    if git:
        (repo / ".git").mkdir()
    (repo / "Pulumi.yaml").write_text("name: repo\nruntime: python\n")
    example = repo / "examples" / "tf"
    example.mkdir(parents=True)
    (example / "Pulumi.yaml").write_text("name: tf\nruntime: python\n")
    (example / "job.yaml").write_text(JOB)
    before = TreeState.of(repo / "examples")
    outcome = run_cli(["preview", "examples/tf/job.yaml", "-q"], repo)
    assert_bounded(outcome)
    assert outcome.code == 1, outcome.stderr
    assert before.changes(TreeState.of(repo / "examples")) == []
    assert (repo / ".trainjobs" / "examples_tf_job" / "last.yaml").is_file()


# --- run-local scratch folders --------------------------------------------------------

RUN_LOCAL = """\
apiVersion: trainjobs.dev/v1alpha1
kind: RedisBackend
metadata: {{name: rendezvous, namespace: training}}
spec: {{port: 6399, password: true}}
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {{name: meet, namespace: training}}
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          volumes:
            - name: {volume}
              secret: {{secretName: rendezvous-auth, items: [{{key: password, path: {path}}}]}}
          containers:
            - name: pytorch
              image: trainer:1
              command: ["true"]
              volumeMounts: [{{name: {volume}, mountPath: /etc/creds}}]
trainjobs: {{target: pods, backend: rendezvous}}
"""


@pytest.mark.parametrize(
    ("volume", "path", "field"),
    [
        ("creds", "../x", "items[0].path"),
        ("creds", "../../../../../../../../tmp/escaped-by-trainjobs", "items[0].path"),
        ("creds", "a/../../x", "items[0].path"),
        ("creds", "/tmp/escaped-by-trainjobs", "items[0].path"),
        ("creds", "''", "items[0].path"),
        ("'..'", "password", "volumes[0].name"),
        ("'../../../../tmp'", "password", "volumes[0].name"),
        ("'a/b'", "password", "volumes[0].name"),
    ],
    ids=["dotdot", "deep", "inner-dotdot", "absolute", "empty", "name-dotdot", "name-up", "slash"],
)
def test_run_local_never_writes_outside_its_scratch_folder(
    home: Path, volume: str, path: str, field: str
) -> None:
    (home / "stack.yaml").write_text(RUN_LOCAL.format(volume=volume, path=path))
    _refused_untouched(home, ["run-local", "stack.yaml", "--job", "meet"], field, "fix:")
    assert not Path("/tmp/escaped-by-trainjobs").exists()


# --- FIFOs: reading one would hang ----------------------------------------------------


def _fifo_setup(where: str) -> Callable[[Path], list[str]]:
    def setup(home: Path) -> list[str]:
        if where == "last.yaml" or where == "key":
            (home / ".trainjobs" / "job").mkdir(parents=True)
            os.mkfifo(home / ".trainjobs" / "job" / where)
            return ["preview", "job.yaml"]
        if where == "listed render file":
            out = _render_into(home)
            (out / RENDERED).unlink()
            os.mkfifo(out / RENDERED)
            return ["render", "job.yaml", "-o", "out"]
        if where == "written list":
            out = _render_into(home)
            (out / WRITTEN_LIST).unlink()
            os.mkfifo(out / WRITTEN_LIST)
            return ["render", "job.yaml", "-o", "out"]
        if where == "graph file":
            os.mkfifo(home / "g.mmd")
            return ["graph", "job.yaml", "-o", "g.mmd"]
        first = next(iter(crd_files()))
        (home / "crds" / first).parent.mkdir(parents=True)
        os.mkfifo(home / "crds" / first)
        return ["crds", "-o", "crds"]

    return setup


FIFO_CASES = {
    "last.yaml": "not a stored preview",
    "key": "not a stored preview",
    "listed render file": RENDERED,
    "written list": "is not the list of files",
    "graph file": "is not a regular file",
    "crd file": "is not a regular file",
}


@pytest.mark.parametrize("where", list(FIFO_CASES), ids=list(FIFO_CASES))
def test_a_fifo_where_an_output_goes_is_refused_without_hanging(home: Path, where: str) -> None:
    argv = _fifo_setup(where)(home)
    _refused_untouched(home, argv, FIFO_CASES[where])


@pytest.mark.parametrize(
    "relative",
    ["../outside/x", "a/../../outside/x", "link/x"],
    ids=["dotdot", "inner-dotdot", "through-a-link"],
)
def test_run_local_file_writer_is_the_last_guard(tmp_path: Path, relative: str) -> None:
    """Even a plan that got past the checks cannot make write_files leave the scratch."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "link").symlink_to(tmp_path)
    before = TreeState.of(tmp_path)
    with pytest.raises(TrainjobsError, match="outside its scratch folder"):
        write_files([FileSpec(scratch / relative, b"secret", 0o600)], scratch)
    assert before.changes(TreeState.of(tmp_path)) == []
