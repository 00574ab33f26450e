"""Run the real Pulumi CLI on a copy of this project, with nothing fetched from the network.

The three programs come from ``tests/cluster/build.sh`` (cached under
``~/.cache/trainjobs``; built on first use): the ``pulumi`` CLI with the
``pulumi-language-python-exec`` shim, the Python language host and the Kubernetes
provider. Pulumi finds them on ``PATH``; automatic plugin downloads and the update
check are off; state lives in a ``file://`` backend in a temporary folder, and secrets
are encrypted with a fixed passphrase.

The project is copied (``Pulumi.yaml``, ``__main__.py``, ``stacks/``, ``examples/``,
``policy/``) because ``pulumi stack init`` writes an encryption salt into the stack's
config file, and the copy's ``virtualenv`` runtime options name this interpreter's
environment. The program imports ``trainjobs`` from this tree (``PYTHONPATH``).

This is a plain module (no pytest), usable by hand::

    python -m tests.cluster.pulumi_up.pulumi_cli /tmp/p demo -- preview --diff
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = ["PROGRAMS", "Project", "PulumiError", "Result", "bin_dirs", "render"]

REPO = Path(__file__).resolve().parents[3]
BUILD_SH = REPO / "tests" / "cluster" / "build.sh"
PROGRAMS = ("pulumi", "pulumi-language-python", "pulumi-resource-kubernetes")
"""The build.sh programs a ``pulumi up`` needs (the CLI, the language host, the provider)."""
FILES = {"pulumi-language-python": ("pulumi-language-python", "pulumi-resource-pulumi-python")}
"""Files a program's bin folder must hold besides the program: the dynamic provider plugin
that runs trainjobs' generated secrets ships with the language host."""
PROJECT_FILES = ("Pulumi.yaml", "__main__.py", "stacks", "examples", "policy")
PASSPHRASE = "trainjobs-tests"  # encrypts the test stacks' secrets; not a secret itself


class PulumiError(AssertionError):
    """A pulumi command exited other than expected; holds its command line and output."""


def _print_dir(program: str) -> Path:
    out = subprocess.run(
        [str(BUILD_SH), "--print-dir", program], check=True, capture_output=True, text=True
    )
    return Path(out.stdout.strip())


def bin_dirs(build: bool = True) -> list[Path]:
    """The bin folders of :data:`PROGRAMS`; builds the missing ones first (minutes, once)."""
    dirs = {program: _print_dir(program) for program in PROGRAMS}

    def built(program: str) -> bool:
        return all((dirs[program] / f).is_file() for f in FILES.get(program, (program,)))

    missing = [p for p in dirs if not built(p)]
    if missing and build:
        print(f"building {', '.join(missing)} with {BUILD_SH} (once per machine)", file=sys.stderr)
        subprocess.run([str(BUILD_SH), *missing], check=True, stdout=sys.stderr)
        missing = [p for p in dirs if not built(p)]
    if missing:
        raise PulumiError(
            f"not built: {', '.join(missing)}; run `tests/cluster/build.sh {' '.join(missing)}`"
        )
    return list(dirs.values())


@dataclass(frozen=True)
class Result:
    """What one pulumi command did."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    def __str__(self) -> str:
        return (
            f"$ pulumi {' '.join(self.args)}\nexit {self.returncode}\n"
            f"--- stdout\n{self.stdout[-6000:]}\n--- stderr\n{self.stderr[-4000:]}"
        )

    def json(self) -> Any:
        """stdout parsed as JSON (``--json`` commands)."""
        return json.loads(self.stdout)


def _use_this_python(path: Path) -> None:
    """Point a copied Pulumi.yaml / PulumiPolicy.yaml at this interpreter's environment."""
    doc = yaml.safe_load(path.read_text())
    runtime = doc.get("runtime")
    if isinstance(runtime, dict):
        options = runtime.setdefault("options", {})
        options["virtualenv"] = sys.prefix
        path.write_text(yaml.safe_dump(doc, sort_keys=False))


@dataclass
class Project:
    """A copy of this project in ``workdir/project`` with its own Pulumi home and state."""

    workdir: Path
    kubeconfig: Path | None = None
    extra_env: Mapping[str, str] = field(default_factory=dict)
    dirs: Sequence[Path] = field(default_factory=bin_dirs)

    def __post_init__(self) -> None:
        self.root = self.workdir / "project"
        self.root.mkdir(parents=True)
        for name in PROJECT_FILES:
            source = REPO / name
            if source.is_dir():
                shutil.copytree(source, self.root / name, ignore=shutil.ignore_patterns(".*"))
            else:
                shutil.copy2(source, self.root / name)
        _use_this_python(self.root / "Pulumi.yaml")
        _use_this_python(self.root / "policy" / "PulumiPolicy.yaml")
        state = self.workdir / "state"
        state.mkdir()
        home = self.workdir / "pulumi-home"
        home.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PULUMI_", "KUBE"))}
        env.update(
            {
                # The venv's python first: the language host runs the `python3` on PATH.
                "PATH": os.pathsep.join(
                    [str(Path(sys.executable).parent), *map(str, self.dirs), env.get("PATH", "")]
                ),
                "PULUMI_PYTHON_CMD": sys.executable,
                "PYTHONPATH": str(REPO),
                "PULUMI_HOME": str(home),
                # metadata=skip: the file backend then writes no `.attrs` sidecar, which a
                # SIGKILL between its create and its write leaves empty, after which every
                # command fails "failed to load checkpoint: EOF" (README: When an update is
                # interrupted; tests/cluster/pulumi_up/test_faults.py).
                "PULUMI_BACKEND_URL": f"file://{state}?metadata=skip",
                "PULUMI_CONFIG_PASSPHRASE": PASSPHRASE,
                "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
                "PULUMI_SKIP_UPDATE_CHECK": "true",
                "PULUMI_SKIP_CONFIRMATIONS": "true",
                # Turns on `--event-log FILE`: the engine's events in order, one per line.
                "PULUMI_DEBUG_COMMANDS": "true",
                "NO_COLOR": "1",
            }
        )
        if self.kubeconfig is not None:
            env["KUBECONFIG"] = str(self.kubeconfig)
        env.update(self.extra_env)
        self.env = env
        self.stacks_made: list[str] = []
        """Stacks :meth:`init` made, for a teardown to destroy."""

    def pulumi(self, *args: str, ok: Sequence[int] = (0,), timeout: float = 900) -> Result:
        """Run ``pulumi ARGS`` in the project copy; PulumiError unless it exits with ``ok``."""
        proc = subprocess.run(
            ["pulumi", *args, "--non-interactive", "--color=never"],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        result = Result(tuple(args), proc.returncode, proc.stdout, proc.stderr)
        if proc.returncode not in ok:
            raise PulumiError(str(result))
        return result

    def init(self, stack: str, text: str | None = None) -> None:
        """``pulumi stack init STACK`` (secrets: the passphrase), its stack file first
        written with ``text`` when given."""
        if text is not None:
            self.stack_file(stack).write_text(text)
        self.pulumi("stack", "init", stack, "--secrets-provider=passphrase")
        self.stacks_made.append(stack)

    def export(self, stack: str) -> list[dict[str, Any]]:
        """The resources of the stack's state (``pulumi stack export``)."""
        deployment = self.pulumi("stack", "export", "--stack", stack).json()
        resources: list[dict[str, Any]] = deployment["deployment"].get("resources") or []
        return resources

    def stack_file(self, stack: str) -> Path:
        """The copy's ``stacks/Pulumi.STACK.yaml``."""
        return self.root / "stacks" / f"Pulumi.{stack}.yaml"


def render(stack_file: Path, *args: str) -> list[dict[str, Any]]:
    """What ``trainjobs render STACK_FILE`` prints, as objects."""
    proc = subprocess.run(
        [sys.executable, "-m", "trainjobs.cli", "render", str(stack_file), *args],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise PulumiError(f"trainjobs render {stack_file}: exit {proc.returncode}\n{proc.stderr}")
    return [doc for doc in yaml.safe_load_all(proc.stdout) if doc]


def main(argv: Sequence[str]) -> int:
    """``python -m tests.cluster.pulumi_up.pulumi_cli WORKDIR STACK -- PULUMI ARGS``."""
    workdir, stack, _, *rest = argv
    project = Project(Path(workdir), kubeconfig=Path(os.environ["KUBECONFIG"]))
    project.init(stack)
    result = project.pulumi(*rest, "--stack", stack, ok=range(256))
    print(result)
    return result.returncode


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
