"""Hostile and careless input, across every command that reads it (issue 14, rules 2-4).

Each case writes its files into a fresh folder, runs one ``trainjobs`` command there in
a forked child (:mod:`tests.hostile.harness`) and asserts the refusal: exit 2, a message
holding the given fragments, no traceback, under the CPU and memory bounds, and no file
in the folder changed (the commands here write nothing on a refusal).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from tests.hostile.harness import TreeState, assert_refused, run_cli
from tests.support.paths import ROOT

JOB = (ROOT / "examples" / "tf-mnist" / "tfjob.yaml").read_text()
"""A valid job every case breaks in one way."""

COMMAND = '["python", "/var/tf_mnist/mnist_with_summaries.py", "--max_steps=1000"]'


def with_container(extra: str) -> str:
    """The job with ``extra`` (flow-style fields) added to the Chief's container."""
    return JOB.replace(f"command: {COMMAND}", f"command: {COMMAND}\n              {extra}", 1)


def with_metadata(extra: str) -> str:
    """The job with ``extra`` added under metadata."""
    return JOB.replace("  name: mnist\n", f"  name: mnist\n  {extra}\n", 1)


def stack(*entries: str, extra: str = "") -> str:
    """A stack config listing ``entries`` (YAML flow text) as jobs."""
    jobs = "".join(f"    - {e}\n" for e in entries)
    return f"config:\n{extra}  trainjobs:jobs:\n{jobs}"


def laughs(levels: int, width: int = 10) -> str:
    """A billion-laughs document: each level names the one below ``width`` times."""
    lines = ["l0: &l0 [" + ", ".join(["lol"] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def merge_laughs(levels: int) -> str:
    """The same through merge keys: each mapping merges the one below twice."""
    lines = ["m0: &m0 {a: 1, b: 2}"]
    for i in range(1, levels):
        lines.append(f"m{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}], k{i}: {i}}}")
    return "\n".join(lines) + "\n"


def fan_out(levels: int) -> dict[str, str | bytes]:
    """Job files each naming the next twice: 2^levels reads without a limit."""
    files: dict[str, str | bytes] = {
        f"f{i}.yaml": f"file: f{i + 1}.yaml\n---\nfile: f{i + 1}.yaml\n" for i in range(levels)
    }
    files[f"f{levels}.yaml"] = JOB
    return files


@dataclass(frozen=True)
class Case:
    """One hostile input: files to write, options, what stderr must say.

    ``path`` is the input the command reads, relative to the case's folder (default
    ``job.yaml``); ``setup`` runs after the files are written (FIFOs, links);
    ``env`` is set for the command only.
    """

    files: dict[str, str | bytes]
    options: list[str]
    fragments: tuple[str, ...]
    setup: Callable[[Path], None] | None = None
    path: str = "job.yaml"
    env: dict[str, str] = field(default_factory=dict)


def _fifo(name: str) -> Callable[[Path], None]:
    return lambda d: os.mkfifo(d / name)


def _unreadable(name: str) -> Callable[[Path], None]:
    return lambda d: (d / name).chmod(0)


def _link(name: str, to: str) -> Callable[[Path], None]:
    return lambda d: (d / name).symlink_to(to)


def _mkdir(name: str) -> Callable[[Path], None]:
    return lambda d: (d / name).mkdir()


# The input-reading cases, each as a file ``job.yaml`` (or a stack naming files).
# They run under every command that reads a stack, below.
INPUTS: dict[str, Case] = {
    # Rule 2: bounded size, depth, alias expansion and work.
    "dev-zero": Case({}, [], path="/dev/zero", fragments=("/dev/zero", "not a regular file")),
    "dev-urandom": Case({}, [], path="/dev/urandom", fragments=("not a regular file",)),
    "fifo": Case(
        {}, [], path="pipe.yaml", fragments=("not a regular file",), setup=_fifo("pipe.yaml")
    ),
    "directory": Case({}, [], path="sub", fragments=("is a directory",), setup=_mkdir("sub")),
    "huge-file": Case(
        {"job.yaml": "a: " + "x" * (9 << 20) + "\n"}, [], ("TRAINJOBS_MAX_FILE_BYTES",)
    ),
    "huge-comment": Case({"job.yaml": JOB + "#" * (9 << 20)}, [], ("TRAINJOBS_MAX_FILE_BYTES",)),
    "deep-flow": Case(
        {"job.yaml": "a: " + "[" * 5000 + "]" * 5000}, [], ("TRAINJOBS_MAX_YAML_DEPTH",)
    ),
    "deep-flow-map": Case(
        {"job.yaml": "a: " + "{a: " * 3000 + "1" + "}" * 3000}, [], ("TRAINJOBS_MAX_YAML_DEPTH",)
    ),
    "deep-101": Case(
        {"job.yaml": "a: " + "[" * 101 + "]" * 101}, [], ("TRAINJOBS_MAX_YAML_DEPTH",)
    ),
    "deep-block": Case(
        {"job.yaml": "".join(" " * i + "a:\n" for i in range(400)) + " " * 400 + "b: 1\n"},
        [],
        ("TRAINJOBS_MAX_YAML_DEPTH",),
    ),
    "deep-in-job": Case(
        {"job.yaml": with_metadata("labels: {x: " + "[" * 200 + "]" * 200 + "}")},
        [],
        ("TRAINJOBS_MAX_YAML_DEPTH",),
    ),
    "billion-laughs": Case({"job.yaml": laughs(9)}, [], ("TRAINJOBS_MAX_YAML_NODES",)),
    "laughs-in-job": Case(
        {"job.yaml": laughs(8) + "\n---\n" + JOB}, [], ("TRAINJOBS_MAX_YAML_NODES",)
    ),
    "laughs-wide": Case({"job.yaml": laughs(4, 200)}, [], ("TRAINJOBS_MAX_YAML_NODES",)),
    "merge-laughs": Case({"job.yaml": merge_laughs(40)}, [], ("TRAINJOBS_MAX_YAML_NODES",)),
    "long-string-aliases": Case(
        {"job.yaml": "s: &s " + "x" * 2_000_000 + "\nl: [" + ", ".join(["*s"] * 600) + "]\n"},
        [],
        ("TRAINJOBS_MAX_YAML_NODES",),
    ),
    "million-items": Case({"job.yaml": "- 1\n" * 1_000_000}, [], ("TRAINJOBS_MAX_YAML_NODES",)),
    "million-empty-documents": Case(
        {"job.yaml": "---\n" * 1_000_000}, [], ("TRAINJOBS_MAX_YAML_NODES",)
    ),
    "flow-of-ones": Case(
        {"job.yaml": "[" + "1," * 2_000_000 + "1]"}, [], ("TRAINJOBS_MAX_YAML_NODES",)
    ),
    "dense-lines-under-the-scan": Case(
        {"job.yaml": "- a: 1\n" * 83_000}, [], ("must be a mapping",)
    ),
    "many-small-jobs-lines": Case(
        {"job.yaml": "".join(f"k{i}: {i}\n" for i in range(240_000))}, [], ("job.yaml",)
    ),
    "self-alias": Case({"job.yaml": "a: &a [1, *a]\n"}, [], ("contains it",)),
    "undefined-alias": Case({"job.yaml": "a: *nothing\n"}, [], ("undefined alias",)),
    "proc-mem": Case({}, [], path="/proc/self/mem", fragments=("cannot read",)),
    "proc-environ": Case({}, [], path="/proc/self/environ", fragments=("/proc",)),
    "recursive-alias": Case({"job.yaml": "- &a\n  - *a\n"}, [], ("contains it",)),
    "quantity-huge-exponent": Case(
        {"job.yaml": JOB.replace('cpu: "1"', 'cpu: "1e999999999"')}, [], ("cpu", "quantity")
    ),
    "quantity-negative-exponent": Case(
        {"job.yaml": JOB.replace("memory: 2Gi", 'memory: "1e-999999999"')}, [], ("memory",)
    ),
    "quantity-long": Case(
        {"job.yaml": JOB.replace('cpu: "1"', 'cpu: "' + "9" * 5000 + '"')}, [], ("cpu",)
    ),
    "quantity-nan": Case({"job.yaml": JOB.replace('cpu: "1"', "cpu: .nan")}, [], ("cpu",)),
    "quantity-inf": Case({"job.yaml": JOB.replace('cpu: "1"', "cpu: .inf")}, [], ("cpu",)),
    "quantity-neg-inf": Case(
        {"job.yaml": JOB.replace("memory: 2Gi", "memory: -.inf")}, [], ("memory",)
    ),
    "quantity-float-huge": Case(
        {"job.yaml": JOB.replace("memory: 2Gi", "memory: 1e300")}, [], ("memory",)
    ),
    "replicas-huge": Case(
        {"job.yaml": JOB.replace("replicas: 2", "replicas: 1000000000000")}, [], ("pods",)
    ),
    "replicas-negative": Case(
        {"job.yaml": JOB.replace("replicas: 2", "replicas: -5")}, [], ("replicas",)
    ),
    "replicas-nan": Case(
        {"job.yaml": JOB.replace("replicas: 2", "replicas: .nan")}, [], ("replicas",)
    ),
    "replicas-per-job": Case(
        {"job.yaml": JOB.replace("replicas: 2", "replicas: 10001")},
        [],
        ("TRAINJOBS_MAX_PODS_PER_JOB",),
    ),
    "replicas-20-jobs": Case(
        {
            "job.yaml": "\n---\n".join(
                JOB.replace("replicas: 2", "replicas: 9990").replace("name: mnist", f"name: m{i}")
                for i in range(20)
            )
        },
        [],
        ("TRAINJOBS_MAX_PODS", "20,000"),
    ),
    "file-fan-out": Case(fan_out(30), [], path="f0.yaml", fragments=("TRAINJOBS_MAX_FILES",)),
    "file-fan-out-wide": Case(
        {
            "job.yaml": stack(*["{file: j.yaml}"] * 1200),
            "j.yaml": JOB,
        },
        [],
        ("TRAINJOBS_MAX_FILES",),
    ),
    "file-self": Case({"job.yaml": stack("{file: job.yaml}")}, [], ("round in a circle",)),
    "file-cycle": Case(
        {
            "job.yaml": stack("{file: a.yaml}"),
            "a.yaml": "file: b.yaml\n",
            "b.yaml": "file: a.yaml\n",
        },
        [],
        ("round in a circle", "a.yaml"),
    ),
    "file-cycle-platform": Case(
        {
            "job.yaml": "config:\n  trainjobs:backends: [{file: r.yaml}]\n",
            "r.yaml": "config:\n  trainjobs:backends: [{file: r.yaml}]\n",
        },
        [],
        ("backends[0]",),
    ),
    # Rule 3 (input): where file: may point, and never quoting what it is not.
    "file-etc-passwd": Case({"job.yaml": stack("{file: /etc/passwd}")}, [], (".yaml or .yml",)),
    "file-no-suffix": Case(
        {"job.yaml": stack("{file: notes}"), "notes": "secret: s3cr3t\n"}, [], (".yaml",)
    ),
    "file-absolute-outside": Case(
        {"job.yaml": stack("{file: /etc/hostname.yaml}")}, [], ("outside", "TRAINJOBS_FILE_ROOTS")
    ),
    "file-dotdot-outside": Case(
        {"job.yaml": stack("{file: ../../../../../../../../etc/x.yaml}")},
        [],
        ("outside", "TRAINJOBS_FILE_ROOTS"),
    ),
    "file-symlink-outside": Case(
        {"job.yaml": stack("{file: link.yaml}")},
        [],
        ("outside",),
        setup=_link("link.yaml", "/etc/passwd"),
    ),
    "file-nul": Case({"job.yaml": stack('{file: "a\\0b.yaml"}')}, [], ("file must be the path",)),
    "file-newline": Case({"job.yaml": stack('{file: "a\\nb.yaml"}')}, [], ("one line",)),
    "file-empty-name": Case({"job.yaml": stack('{file: ""}')}, [], ("file must be the path",)),
    "file-number": Case({"job.yaml": stack("{file: 42}")}, [], ("file must be the path",)),
    "file-list": Case({"job.yaml": stack("{file: [a.yaml]}")}, [], ("file must be the path",)),
    "file-missing": Case({"job.yaml": stack("{file: missing.yaml}")}, [], ("No such file",)),
    "file-directory": Case(
        {"job.yaml": stack("{file: d.yaml}")}, [], ("directory",), setup=_mkdir("d.yaml")
    ),
    "file-fifo": Case(
        {"job.yaml": stack("{file: p.yaml}")}, [], ("not a regular file",), setup=_fifo("p.yaml")
    ),
    "file-unreadable": Case(
        {"job.yaml": stack("{file: j.yaml}"), "j.yaml": JOB},
        [],
        ("j.yaml", "Permission denied"),
        setup=_unreadable("j.yaml"),
    ),
    "file-scalar-content": Case(
        {"job.yaml": stack("{file: j.yaml}"), "j.yaml": "root:x:0:0:root:/root:/bin/bash\n"},
        [],
        ("must be a mapping", "not text"),
    ),
    "file-binary": Case(
        {"job.yaml": stack("{file: j.yaml}"), "j.yaml": b"\x00\x01\x02"}, [], ("binary",)
    ),
    "file-latin1": Case(
        {"job.yaml": stack("{file: j.yaml}"), "j.yaml": b"a: \xe9t\xe9\n"}, [], ("UTF-8",)
    ),
    "placeholder-env": Case(
        {"job.yaml": with_container("env: [{name: P, value: '<generated:password:kubeflow/x>'}]")},
        [],
        ("env[0].value", "reserved"),
    ),
    "placeholder-key": Case(
        {"job.yaml": with_metadata("annotations: {note: '<generated:ecdsa-p521-private:a/b>'}")},
        [],
        ("annotations.note", "reserved"),
    ),
    "placeholder-unknown-kind": Case(
        {"job.yaml": with_container("args: ['--token=<generated:password:x/y>']")},
        [],
        ("args[0]", "reserved"),
    ),
    # Rule 4: every bad input is exit 2 with a field path and a fix.
    "empty-file": Case({"job.yaml": ""}, [], ("no YAML documents",)),
    "only-comments": Case({"job.yaml": "# nothing\n"}, [], ("no YAML documents",)),
    "binary": Case({"job.yaml": b"\x7fELF\x00\x00"}, [], ("binary",)),
    "not-utf8": Case({"job.yaml": b"\xff\xfe\x00a"}, [], ("job.yaml",)),
    "syntax": Case({"job.yaml": "a: [1, 2\nb: 3\n"}, [], ("invalid YAML at line",)),
    "tab-indent": Case({"job.yaml": "a:\n\tb: 1\n"}, [], ("invalid YAML",)),
    "unknown-tag": Case({"job.yaml": "a: !!python/object:os.system ls\n"}, [], ("invalid YAML",)),
    "scalar-document": Case({"job.yaml": "hello\n"}, [], ("must be a mapping",)),
    "list-document": Case({"job.yaml": "- a\n- b\n"}, [], ("must be a mapping",)),
    "duplicate-key": Case(
        {"job.yaml": with_metadata("name: other")}, [], ("duplicate key 'name'", "line 7")
    ),
    "duplicate-privileged": Case(
        {
            "job.yaml": with_container(
                "securityContext: {privileged: true, runAsUser: 0, privileged: false}"
            )
        },
        [],
        ("duplicate key 'privileged'",),
    ),
    "duplicate-stack-key": Case(
        {"job.yaml": "config:\n  trainjobs:jobs: []\n  trainjobs:jobs: []\n"},
        [],
        ("duplicate key",),
    ),
    "stack-namespace-typo": Case(
        {
            "job.yaml": stack("{file: j.yaml}").replace("trainjobs:jobs", "trainjob:jobs"),
            "j.yaml": JOB,
        },
        [],
        ("trainjob:jobs", "did you mean trainjobs:jobs"),
    ),
    "stack-namespace-case": Case(
        {"job.yaml": "config:\n  TrainJobs:target: pods\n"}, [], ("did you mean trainjobs:target",)
    ),
    "stack-unknown-key": Case(
        {"job.yaml": "config:\n  trainjobs:jbos: []\n"}, [], ("trainjobs:jbos",)
    ),
    "stack-config-list": Case({"job.yaml": "config: [1, 2]\n"}, [], ("config must be a mapping",)),
    "stack-jobs-scalar": Case(
        {"job.yaml": "config:\n  trainjobs:jobs: 3\n"}, [], ("jobs must be a list",)
    ),
    "stack-target-typo": Case(
        {"job.yaml": "config:\n  trainjobs:target: podz\n"}, [], ("unknown target",)
    ),
    "stack-version-float": Case(
        {"job.yaml": "config:\n  trainjobs:k8sVersion: 1.30\n"}, [], ("k8sVersion",)
    ),
    "env-name-equals": Case(
        {"job.yaml": with_container("env: [{name: 'A=B', value: x}]")}, [], ("env[0].name", "'='")
    ),
    "env-name-empty": Case(
        {"job.yaml": with_container("env: [{name: '', value: x}]")}, [], ("env[0].name",)
    ),
    "env-name-control": Case(
        {"job.yaml": with_container('env: [{name: "A\\u0007", value: x}]')}, [], ("env[0].name",)
    ),
    "env-name-old-k8s": Case(
        {"job.yaml": with_container("env: [{name: '1A B', value: x}]")},
        ["--k8s-version", "1.30"],
        ("env[0].name",),
    ),
    "env-value-and-from": Case(
        {
            "job.yaml": with_container(
                "env: [{name: A, value: x, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]"
            )
        },
        [],
        ("env[0].valueFrom", "not both"),
    ),
    "port-too-big": Case(
        {"job.yaml": with_container("ports: [{containerPort: 70000, name: p}]")},
        [],
        ("containerPort", "65535"),
    ),
    "port-zero": Case(
        {"job.yaml": with_container("ports: [{containerPort: 0, name: p}]")}, [], ("containerPort",)
    ),
    "port-negative-host": Case(
        {"job.yaml": with_container("ports: [{containerPort: 80, hostPort: -1, name: p}]")},
        [],
        ("hostPort",),
    ),
    "port-name-long": Case(
        {"job.yaml": with_container("ports: [{containerPort: 80, name: a-very-long-port-name}]")},
        [],
        ("ports[0].name",),
    ),
    "port-string": Case(
        {"job.yaml": with_container("ports: [{containerPort: http}]")}, [], ("containerPort",)
    ),
    "label-key-bad": Case({"job.yaml": with_metadata("labels: {'bad key!': x}")}, [], ("labels",)),
    "label-value-long": Case(
        {"job.yaml": with_metadata("labels: {a: " + "x" * 64 + "}")}, [], ("labels",)
    ),
    "annotation-key-bad": Case(
        {"job.yaml": with_metadata("annotations: {'a/b/c': x}")}, [], ("annotations", "a/b/c")
    ),
    "annotation-key-empty": Case(
        {"job.yaml": with_metadata("annotations: {'': x}")}, [], ("annotations",)
    ),
    "annotation-prefix-upper": Case(
        {"job.yaml": with_metadata("annotations: {'Example.COM/x': y}")}, [], ("annotations",)
    ),
    "name-nul": Case(
        {"job.yaml": JOB.replace("name: mnist", 'name: "mn\\0ist"')}, [], ("metadata.name",)
    ),
    "name-long": Case(
        {"job.yaml": JOB.replace("name: mnist", "name: " + "a" * 300)}, [], ("metadata.name",)
    ),
    "name-number": Case(
        {"job.yaml": JOB.replace("name: mnist", "name: 42")}, [], ("metadata.name",)
    ),
    "namespace-bad": Case(
        {"job.yaml": JOB.replace("namespace: kubeflow", "namespace: ../etc")}, [], ("namespace",)
    ),
    "kind-unknown": Case(
        {"job.yaml": JOB.replace("kind: TFJob", "kind: TfJob")}, [], ("did you mean",)
    ),
    "spec-scalar": Case({"job.yaml": JOB.split("spec:")[0] + "spec: 3\n"}, [], ("spec",)),
    "replicas-string": Case(
        {"job.yaml": JOB.replace("replicas: 2", "replicas: two")}, [], ("replicas",)
    ),
    "options-unknown": Case(
        {"job.yaml": JOB + "trainjobs: {tagret: pods}\n"}, [], ("trainjobs.tagret",)
    ),
    "options-scalar": Case({"job.yaml": JOB + "trainjobs: 7\n"}, [], ("trainjobs",)),
    "bad-limit-setting": Case(
        {"job.yaml": JOB},
        [],
        ("TRAINJOBS_MAX_FILE_BYTES", "positive"),
        env={"TRAINJOBS_MAX_FILE_BYTES": "lots"},
    ),
    "limit-lowered": Case(
        {"job.yaml": JOB},
        [],
        ("TRAINJOBS_MAX_FILE_BYTES",),
        env={"TRAINJOBS_MAX_FILE_BYTES": "100"},
    ),
    "int-5000-digits": Case(
        {"job.yaml": JOB.replace("replicas: 2", "replicas: " + "9" * 5000)}, [], ("digits",)
    ),
    "key-int-5000-digits": Case({"job.yaml": "9" * 5000 + ": 1\n"}, [], ("invalid YAML",)),
    "timestamp-name": Case(
        {"job.yaml": JOB.replace("name: mnist", "name: 2020-01-01")}, [], ("name",)
    ),
    "binary-tag": Case(
        {"job.yaml": JOB.replace("name: mnist", "name: !!binary aGVsbG8=")}, [], ("name",)
    ),
    "set-tag": Case({"job.yaml": JOB.replace("name: mnist", "name: !!set {a, b}")}, [], ("name",)),
    "unhashable-key": Case({"job.yaml": "? [a, b]\n: c\n"}, [], ("invalid YAML",)),
    "bom": Case(
        {"job.yaml": "\ufeff" + JOB.replace("replicas: 2", "replicas: x")}, [], ("replicas",)
    ),
    "nul-in-value": Case({"job.yaml": JOB.replace('cpu: "1"', 'cpu: "1\\0"', 1)}, [], ("cpu",)),
    "escape-in-key": Case(
        {"job.yaml": with_metadata('labels: {"\\e[31mred": x}')}, [], ("labels",)
    ),
    "many-documents": Case({"job.yaml": "---\n{}\n" * 200_000}, [], ("job.yaml",)),
    "many-jobs": Case(
        {
            "job.yaml": "\n---\n".join(
                JOB.replace("name: mnist", f"name: m{i}").replace("image: kubeflow", "image: x")
                for i in range(1001)
            )
        },
        [],
        ("TRAINJOBS_MAX_JOBS", "1,001 jobs"),
    ),
    "unreadable": Case(
        {"job.yaml": JOB}, [], ("Permission denied",), setup=_unreadable("job.yaml")
    ),
    "missing": Case({}, [], path="nope.yaml", fragments=("No such file",)),
    "dangling-link": Case(
        {}, [], path="l.yaml", fragments=("l.yaml",), setup=_link("l.yaml", "gone.yaml")
    ),
    "link-loop": Case(
        {}, [], path="l.yaml", fragments=("l.yaml",), setup=_link("l.yaml", "l.yaml")
    ),
}

# Commands that read a stack; ``{path}`` is the input.
COMMANDS: dict[str, list[str]] = {
    "render": ["render", "{path}"],
    "check": ["check", "{path}"],
    "graph": ["graph", "{path}"],
    "preview": ["preview", "--state-dir", "{state}", "{path}"],
    "diff": ["diff", "--against", "HEAD", "{path}"],
    "run-local": ["run-local", "--timeout", "1", "{path}"],
}

# The cases every command runs (the cheap, telling ones); the rest run under render.
EVERY_COMMAND = (
    "dev-zero",
    "fifo",
    "billion-laughs",
    "deep-flow",
    "duplicate-key",
    "file-etc-passwd",
    "file-cycle",
    "quantity-huge-exponent",
    "quantity-nan",
    "replicas-20-jobs",
    "replicas-per-job",
    "stack-namespace-typo",
    "env-name-equals",
    "placeholder-env",
    "unreadable",
)


def _run(tmp_path: Path, case: Case, command: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    for name, content in case.files.items():
        target = work / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content)
    if case.setup is not None:
        case.setup(work)
    if "Permission denied" in case.fragments and os.geteuid() == 0:
        pytest.skip("running as root: a file without read permission is still readable")
    if command == "diff":
        # --against reads the file at a git ref: the folder is a repository.
        if os.system(f"git -C {work} init -q && git -C {work} add -A 2>/dev/null >&2"):
            pytest.skip("git is not available")
        os.system(f"git -C {work} -c user.email=t@t -c user.name=t commit -qm base >/dev/null 2>&1")
    state = tmp_path / "state"
    argv = [a.format(path=case.path, state=state) for a in COMMANDS[command]]
    argv = [argv[0], *case.options, *argv[1:]]
    skip = [".git"]
    before = TreeState.of(work, skip)
    outcome = run_cli(argv, work, env=case.env or None)
    assert_refused(outcome, *case.fragments)
    assert before.changes(TreeState.of(work, skip)) == []
    assert not state.exists() or not any(state.rglob("last.yaml")), "a refused preview stored"


# Where a command refuses a case for its own reason: run-local runs one job, on one
# machine, so its own (lower) replica limit comes first.
OVERRIDES: dict[tuple[str, str], Case] = {
    ("replicas-20-jobs", "run-local"): replace(
        INPUTS["replicas-20-jobs"], options=["--job", "m3"], fragments=("LOCAL_REPLICAS",)
    ),
    ("replicas-per-job", "run-local"): replace(
        INPUTS["replicas-per-job"], fragments=("LOCAL_REPLICAS",)
    ),
}


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_render_refuses(tmp_path: Path, name: str) -> None:
    _run(tmp_path, INPUTS[name], "render")


@pytest.mark.parametrize("command", sorted(c for c in COMMANDS if c != "render"))
@pytest.mark.parametrize("name", EVERY_COMMAND)
def test_every_command_refuses(tmp_path: Path, name: str, command: str) -> None:
    case = OVERRIDES.get((name, command), INPUTS[name])
    if command == "diff" and case.setup is not None:
        pytest.skip("git cannot hold a FIFO or an unreadable file")
    if command == "diff" and not case.files:
        pytest.skip("--against needs a file in the repository")
    _run(tmp_path, case, command)
