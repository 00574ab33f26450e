"""The output rules as properties, over generated folders and text (hypothesis).

* ``write_folder`` into any folder: either it refuses and the folder is byte for byte
  as it was, or every entry it did not write before is still there unchanged.
* ``printable`` of any text holds no character that acts on a terminal, and leaves
  text that holds none unchanged.
* ``redact`` of any env list hides every secret-named literal value.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.hostile.harness import TreeState
from tests.hostile.test_output_terminal import RAW
from trainjobs.k8s.redact import REDACTED, redact, secret_env_name
from trainjobs.output import WRITTEN_LIST, OutputError, printable, safe_file_name, write_folder

_NAMES = st.text(
    alphabet=st.sampled_from("abc.-_0123456789\n\x1b é"), min_size=1, max_size=12
).filter(lambda n: n not in (".", "..") and "/" not in n and "\x00" not in n)
_ENTRY = st.tuples(_NAMES, st.sampled_from(["file", "dir", "link", "ours"]))
_RENDERED = st.dictionaries(
    st.from_regex(r"[0-9]{4}-[a-z]{1,6}\.yaml", fullmatch=True), st.text(max_size=20), max_size=4
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_ENTRY, max_size=5), _RENDERED, st.booleans())
def test_write_folder_never_loses_a_file_it_did_not_write(
    entries: list[tuple[str, str]], files: dict[str, str], allow: bool
) -> None:
    root = Path(tempfile.mkdtemp(prefix="trainjobs-prop-"))
    try:
        out = root / "out"
        outside = root / "outside"
        outside.mkdir()
        (outside / "keep").write_text("keep\n")
        ours = {safe_file_name(f"0000-{n[:3]}") + ".yaml" for n, kind in entries if kind == "ours"}
        if ours:
            write_folder(out, dict.fromkeys(ours, "earlier\n"))
        out.mkdir(exist_ok=True)
        for name, kind in entries:
            path = out / name
            if path.exists() or path.is_symlink() or name == WRITTEN_LIST:
                continue
            if kind == "file":
                path.write_text("user's\n")
            elif kind == "dir":
                path.mkdir()
            elif kind == "link":
                path.symlink_to(outside)
        before = TreeState.of(root)
        foreign = {
            rel: state for rel, state in before.entries.items() if rel.split("/")[-1] not in ours
        }
        try:
            write_folder(out, files, allow_other_files=allow)
        except OutputError:
            assert before.changes(TreeState.of(root)) == []
            return
        after = TreeState.of(root)
        for rel, state in foreign.items():
            if rel != f"out/{WRITTEN_LIST}":  # the list is trainjobs' own
                assert after.entries.get(rel) == state, rel
    finally:
        shutil.rmtree(root)


@given(st.text())
def test_printable_leaves_nothing_that_acts_on_a_terminal(text: str) -> None:
    shown = printable(text)
    assert RAW.search(shown) is None and "\n" not in shown
    if RAW.search(text) is None and "\n" not in text:
        assert shown == text


_ENV_NAMES = st.one_of(
    st.sampled_from(["auth", "requirepass", "LOG_LEVEL", "PATH", "MASTER_ADDR"]),
    st.builds(
        lambda a, b: f"{a}_{b}",
        st.from_regex(r"[A-Z]{1,6}", fullmatch=True),
        st.sampled_from(["PASSWORD", "TOKEN", "SECRET", "KEY", "PORT", "HOST"]),
    ),
)


@given(st.lists(st.tuples(_ENV_NAMES, st.text(min_size=1, max_size=10)), max_size=6))
def test_redact_hides_every_secret_named_env_value(env: list[tuple[str, str]]) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "spec": {"containers": [{"env": [{"name": n, "value": v} for n, v in env]}]},
    }
    shown = redact(pod)["spec"]["containers"][0]["env"]
    for (name, value), entry in zip(env, shown, strict=True):
        if secret_env_name(name) and not value.startswith(("$(", "<")):
            assert entry["value"] == REDACTED, (name, value)
        elif not secret_env_name(name):
            assert entry["value"] == value
