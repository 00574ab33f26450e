"""Where the sandbox's programs come from.

For each binary, in order: the file an environment variable names
(``TRAINJOBS_BIN_<NAME>``, e.g. ``TRAINJOBS_BIN_KUBE_APISERVER``); the build of the
pinned version in the cache (``~/.cache/trainjobs/<program>-<version>/bin``, made by
the build script from the Go module proxy); with ``from_path``, the program of that name
on ``PATH``. What is still missing is built by the build script when Go is installed
(minutes per program, once per machine); without Go, :class:`MissingBinaries` says
what is missing and how to get it.

The build script is ``tests/cluster/build.sh`` of a trainjobs clone (it holds the
pinned versions and one go.mod per program). It is found beside the package of an
editable install, in the current folder's clone, or at ``TRAINJOBS_BUILD_SH``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from trainjobs.errors import TrainjobsError

__all__ = [
    "BINARIES",
    "PULUMI_BINARIES",
    "MissingBinaries",
    "binaries",
    "build_script",
    "env_var",
]

BINARIES: dict[str, str] = {
    "etcd": "etcd",
    "kube-apiserver": "kubernetes",
    "kube-controller-manager": "kubernetes",
    "kube-scheduler": "kubernetes",
    "kubectl": "kubernetes",
    "kwok": "kwok",
    "training-operator": "training-operator",
    "mpi-operator": "mpi-operator",
    "jobset": "jobset",
    "trainer-controller-manager": "trainer",
}
"""Each binary the control plane runs, and the build-script program that builds it."""

PULUMI_BINARIES: dict[str, str] = {
    "pulumi": "pulumi",
    "pulumi-language-python": "pulumi-language-python",
    "pulumi-resource-kubernetes": "pulumi-resource-kubernetes",
}
"""The binaries a ``pulumi up`` onto the sandbox runs (the CLI, the Python language host
and the Kubernetes provider), and their build-script programs."""

BUILD_SCRIPT_ENV = "TRAINJOBS_BUILD_SH"


class MissingBinaries(TrainjobsError):
    """Binaries that are neither named, built nor buildable; the message says how to get them."""


def env_var(binary: str) -> str:
    """The environment variable that names ``binary``'s file: ``TRAINJOBS_BIN_KWOK`` …"""
    return "TRAINJOBS_BIN_" + binary.upper().replace("-", "_")


def build_script(environ: Mapping[str, str] | None = None) -> Path | None:
    """The build script: ``$TRAINJOBS_BUILD_SH``, the clone this package runs from, or the
    current folder's clone; None when there is none (an installed package, elsewhere)."""
    environ = os.environ if environ is None else environ
    named = environ.get(BUILD_SCRIPT_ENV)
    if named:
        return Path(named)
    for root in (Path(__file__).resolve().parents[2], Path.cwd()):
        candidate = root / "tests" / "cluster" / "build.sh"
        if candidate.is_file():
            return candidate
    return None


def _bin_dir(script: Path, program: str) -> Path:
    out = subprocess.run(
        [str(script), "--print-dir", program], check=True, capture_output=True, text=True
    )
    return Path(out.stdout.strip())


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _cached(script: Path | None, wanted: Mapping[str, str]) -> dict[str, Path]:
    if script is None:
        return {}
    dirs = {program: _bin_dir(script, program) for program in sorted(set(wanted.values()))}
    return {name: dirs[program] / name for name, program in wanted.items()}


def binaries(
    wanted: Mapping[str, str] = BINARIES,
    *,
    build: bool = True,
    from_path: bool = False,
    environ: Mapping[str, str] | None = None,
    progress: TextIO = sys.stderr,
) -> dict[str, Path]:
    """The file of every binary in ``wanted`` (name → build-script program); builds the
    missing programs first when ``build`` (see the module doc for the order)."""
    environ = os.environ if environ is None else environ
    script = build_script(environ)
    found: dict[str, Path] = {}
    bad_env: list[str] = []
    for name in wanted:
        named = environ.get(env_var(name))
        if named:
            if not _executable(Path(named)):
                bad_env.append(f"{env_var(name)}={named} is not an executable file")
            found[name] = Path(named)
    if bad_env:
        raise MissingBinaries("; ".join(bad_env))
    cached = _cached(script, {n: p for n, p in wanted.items() if n not in found})
    for name, path in cached.items():
        if _executable(path):
            found[name] = path
    if from_path:
        for name in wanted:
            on_path = shutil.which(name, path=environ.get("PATH")) if name not in found else None
            if on_path:
                found[name] = Path(on_path)
    missing = {n: p for n, p in wanted.items() if n not in found}
    if missing and build:
        _build(script, sorted(set(missing.values())), missing, progress)
        for name, path in _cached(script, missing).items():
            if _executable(path):
                found[name] = path
        missing = {n: p for n, p in wanted.items() if n not in found}
    if missing:
        raise MissingBinaries(_how_to_get(script, missing, tried_build=build))
    return {name: found[name] for name in wanted}


def _build(
    script: Path | None, programs: list[str], missing: Mapping[str, str], progress: TextIO
) -> None:
    if script is None or shutil.which("go") is None:
        raise MissingBinaries(_how_to_get(script, missing, tried_build=True))
    print(
        f"building {', '.join(programs)} from the Go module proxy with {script}\n"
        "(once per machine: the first build of everything takes about an hour on 2 cores)",
        file=progress,
        flush=True,
    )
    began = time.monotonic()
    result = subprocess.run([str(script), *programs], stdout=progress, stderr=progress, check=False)
    took = time.monotonic() - began
    if result.returncode != 0:
        raise MissingBinaries(
            f"{script} {' '.join(programs)} failed (exit {result.returncode}); its output is above"
        )
    minutes, seconds = divmod(int(took), 60)
    print(f"built {', '.join(programs)} in {minutes}m{seconds:02d}s", file=progress, flush=True)


def _how_to_get(script: Path | None, missing: Mapping[str, str], *, tried_build: bool) -> str:
    names = ", ".join(sorted(missing))
    programs = " ".join(sorted(set(missing.values())))
    ways: list[str] = []
    if script is None:
        ways.append(
            "run it from a trainjobs clone (its tests/cluster/build.sh builds the pinned "
            f"versions), or set {BUILD_SCRIPT_ENV} to that script"
        )
    elif shutil.which("go") is None:
        ways.append(
            f"install Go (go.dev/doc/install; the version {script.parent / 'recipes'} needs) "
            f"and run `{script} {programs}`"
        )
    elif not tried_build:
        ways.append(f"run `{script} {programs}`")
    example = next(iter(sorted(missing)))
    ways.append(
        f"or name your own: {env_var(example)}=/path/to/{example} (one variable per binary), "
        "or --from-path to take them from PATH"
    )
    return f"missing programs: {names}; " + "; ".join(ways)
