"""Rule 3 of issue 14, terminal side: nothing from the input reaches a terminal raw.

A file name, a job or label name, a Mermaid title may carry a newline, ESC, BEL,
CR, DEL, a C1 control or a bidirectional override. Each case feeds one to the real
CLI and asserts the output holds none of them raw (a line break only where
trainjobs breaks lines, everything else escaped as ``\\x1b``, ``\\n`` …), the
refusal or result it should be, no traceback, bounded cost, nothing else changed.
Mermaid and DOT text must not let a name open a statement of its own (``click``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.hostile.harness import Outcome, TreeState, assert_bounded, assert_refused, run_cli

RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""A character that must never reach a terminal raw (newline aside: trainjobs' own)."""

CONTROLS = {
    "esc-clear": "\x1b[2J",
    "esc-title": "\x1b]0;pwned\x07",
    "newline": "\nok: 0 errors",
    "carriage-return": "\rok",
    "bell": "\x07",
    "backspace": "\x08\x08",
    "delete": "\x7f",
    "c1-csi": "\x9b31m",
    "bidi-override": "\u202egnp.exe",
    "line-separator": "\u2028next",
    "nul-free-tab": "\tx",
}


def _clean(outcome: Outcome) -> None:
    for stream in (outcome.stdout, outcome.stderr):
        found = RAW.search(stream)
        assert found is None, repr(stream[max(0, found.start() - 40) : found.end() + 40])


def _job(name: str = "mnist", labels: dict[str, str] | None = None) -> str:
    meta: dict[str, object] = {"name": name, "namespace": "training"}
    if labels:
        meta["labels"] = labels
    return yaml.safe_dump(
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "TFJob",
            "metadata": meta,
            "spec": {
                "tfReplicaSpecs": {
                    "Worker": {
                        "replicas": 1,
                        "template": {
                            "spec": {
                                "containers": [
                                    {"name": "tensorflow", "image": "tf:2", "command": ["python"]}
                                ]
                            }
                        },
                    }
                }
            },
        },
        allow_unicode=True,
    )


@pytest.mark.parametrize("control", list(CONTROLS.values()), ids=list(CONTROLS))
def test_a_job_name_with_a_control_character_is_refused_escaped(
    tmp_path: Path, control: str
) -> None:
    (tmp_path / "job.yaml").write_text(_job(name=f"mnist{control}"))
    before = TreeState.of(tmp_path)
    outcome = run_cli(["check", "job.yaml"], tmp_path)
    assert_refused(outcome, "metadata.name")
    _clean(outcome)
    assert before.changes(TreeState.of(tmp_path)) == []


@pytest.mark.parametrize("control", ["\x1b[31m", "\n", "\u202e"], ids=["esc", "newline", "bidi"])
def test_a_label_value_with_a_control_character_is_refused_escaped(
    tmp_path: Path, control: str
) -> None:
    (tmp_path / "job.yaml").write_text(_job(labels={"team": f"a{control}b"}))
    outcome = run_cli(["render", "job.yaml", "-o", "out"], tmp_path)
    assert_refused(outcome, "labels")
    _clean(outcome)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "control", ["\x1b[2J", "\nerror: forged", "\x07"], ids=["esc", "newline", "bell"]
)
def test_a_file_name_with_a_control_character_is_shown_escaped(
    tmp_path: Path, control: str
) -> None:
    before = TreeState.of(tmp_path)
    outcome = run_cli(["render", f"missing{control}.yaml"], tmp_path)
    assert_refused(outcome, "missing")
    _clean(outcome)
    assert before.changes(TreeState.of(tmp_path)) == []


@pytest.mark.parametrize("control", ["\x1b[2J", "\n"], ids=["esc", "newline"])
def test_an_output_folder_refusal_names_files_escaped(tmp_path: Path, control: str) -> None:
    (tmp_path / "job.yaml").write_text(_job())
    out = tmp_path / f"out{control}"
    out.mkdir()
    (out / f"notes{control}.txt").write_text("mine\n")
    before = TreeState.of(tmp_path)
    outcome = run_cli(["render", "job.yaml", "-o", out.name], tmp_path)
    assert_refused(outcome, "did not write")
    _clean(outcome)
    assert before.changes(TreeState.of(tmp_path)) == []


def test_a_graph_file_name_with_a_control_character_is_refused_escaped(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(_job())
    outcome = run_cli(["graph", "job.yaml", "-o", "g\x1b[2J.png"], tmp_path)
    assert_refused(outcome, "cannot tell the format")
    _clean(outcome)


@pytest.mark.parametrize("control", ["\x1b[2J", "\n", "\u202e"], ids=["esc", "newline", "bidi"])
def test_diff_tables_show_names_escaped(tmp_path: Path, control: str) -> None:
    # diff reads any render output, names unchecked: the table must still be safe.
    old = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "n"}}
    new = {**old, "metadata": {"name": f"b{control}", "namespace": f"n{control}"}}
    (tmp_path / "old.yaml").write_text(yaml.safe_dump(old))
    (tmp_path / "new.yaml").write_text(yaml.safe_dump(new, allow_unicode=True))
    outcome = run_cli(["diff", "old.yaml", "new.yaml"], tmp_path)
    assert_bounded(outcome)
    assert outcome.code == 1, outcome.stderr
    _clean(outcome)


INJECTIONS = {
    "click": 'x"]\nclick u0 call alert(1)\n%%',
    "style": "x\nstyle u0 fill:#f00",
    "front-matter": "x\n---\ntitle: pwned",
    "markdown": "`**x**`",
    "entity": "x #quot; y",
}


@pytest.mark.parametrize("name", list(INJECTIONS.values()), ids=list(INJECTIONS))
def test_mermaid_labels_cannot_open_statements(tmp_path: Path, name: str) -> None:
    job = tmp_path / f"{name}.yaml"
    job.write_text(_job())
    outcome = run_cli(["graph", job.name], tmp_path)
    assert_bounded(outcome)
    assert outcome.code == 0, outcome.stderr
    _clean(outcome)
    lines = outcome.stdout.splitlines()
    assert lines[0] == "---" and lines[2] == "---" and lines[1].startswith("title: ")
    assert lines[3] == "flowchart LR"
    statements = [line.strip().split()[0] for line in lines[4:]]
    assert set(statements) <= {"subgraph", "end", "style", "%%"} | {
        s for s in statements if s.startswith("u")
    }
    assert not [line for line in lines if line.strip().startswith("click")]
    assert "`" not in "\n".join(lines[3:])  # a Markdown string label is never opened


@pytest.mark.parametrize("name", list(INJECTIONS.values()), ids=list(INJECTIONS))
def test_dot_labels_stay_quoted(tmp_path: Path, name: str) -> None:
    job = tmp_path / f"{name}.yaml"
    job.write_text(_job())
    outcome = run_cli(["graph", job.name, "-o", "g.dot", "-q"], tmp_path)
    assert_bounded(outcome)
    assert outcome.code == 0, outcome.stderr
    text = (tmp_path / "g.dot").read_text()
    assert not RAW.search(text)
    # Every statement line ends a statement: no label spills onto a line of its own.
    for line in text.splitlines()[1:-1]:
        assert line.startswith("  "), line
        assert line.rstrip().endswith((";", "{", "}", "again")), line


@pytest.mark.parametrize(
    "control",
    ["\x1b[2J", "\u202e", "\x07", "\u2028", "\x9b"],
    ids=["esc", "bidi", "bell", "ls", "c1"],
)
def test_render_yaml_writes_free_text_escaped(tmp_path: Path, control: str) -> None:
    # Annotations and images are free text the checks let through: YAML escapes them.
    job = yaml.safe_load(_job())
    job["metadata"]["annotations"] = {"note": f"a{control}b"}
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(job, allow_unicode=True))
    outcome = run_cli(["render", "job.yaml", "-q"], tmp_path)
    assert_bounded(outcome)
    assert outcome.code == 0, outcome.stderr
    _clean(outcome)
    assert yaml.safe_load(outcome.stdout)["metadata"]["annotations"]["note"] == f"a{control}b"
