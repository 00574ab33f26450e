"""Run one ``trainjobs`` command as hostile input meets it, and judge the outcome.

Every hostile case runs the real CLI entry point (``trainjobs.cli.main``) in a forked
child: modules already imported are shared, so a case costs milliseconds, yet the child
can be killed when it hangs and its own CPU time and memory are measured by the kernel
(``os.wait4``). :func:`run_cli_process` starts a fresh interpreter instead, for the few
cases about the process itself (a closed pipe, a signal, the entry point).

Bounds asserted by :func:`assert_refused` (the issue's promise to users):

* exit code 2, a message on stderr, no traceback, no ``internal error``;
* at most :data:`CPU_SECONDS` of CPU (user + system) — on a busy 2-core CI machine
  wall time says little, CPU time says how much work the input caused; a hang with no
  CPU (a FIFO, an endless stdin) is caught by :data:`WALL_SECONDS`;
* at most :data:`RSS_GROWTH_BYTES` more resident memory than the parent had when it
  forked;
* no file outside the command's own output changed (:class:`TreeState`).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import resource
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

CPU_SECONDS = 10.0
"""The most CPU time one hostile input may cost. The dearest input the loader still
parses (``dense-lines-under-the-scan``, 83,000 list items) costs about 3 s on an idle
machine and measured 5.3 s in CI, where the test control plane's processes share the
two cores; a runaway (quadratic work, a hang) costs minutes, far past this bound."""

WALL_SECONDS = 30.0
"""When a case is killed as hung (generous: the machine may be busy)."""

RSS_GROWTH_BYTES = 1 << 30
"""The most resident memory one hostile input may add (1 GiB)."""

TRACEBACK_MARKERS = ("Traceback (most recent call last)", "internal error")


@dataclass(frozen=True)
class Outcome:
    """What one command did: its exit code, its output and what it cost."""

    code: int
    stdout: str
    stderr: str
    cpu_seconds: float
    rss_growth_bytes: int
    hung: bool


def _own_rss_bytes() -> int:
    """This process's resident memory now (Linux /proc)."""
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE")


def _child(argv: Sequence[str], cwd: Path, stdin_fd: int, out_fd: int, err_fd: int) -> None:
    """Body of the forked child: run ``main`` with its streams on the pipes; never return."""
    code = 3
    try:
        os.chdir(cwd)
        os.dup2(stdin_fd, 0)
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False))
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=True)
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True)
        from trainjobs.cli import main

        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse's usage errors
            code = exc.code if isinstance(exc.code, int) else 2
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            # The pipe may be gone; the exit code still tells.
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


def _read_all(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


def run_cli(
    argv: Sequence[str],
    cwd: Path,
    stdin: bytes | Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Outcome:
    """Run ``trainjobs ARGV`` in a forked child in ``cwd``; stdin is bytes, a file or empty.

    The child's stdout and stderr go to files (a pipe could fill up and stall it).
    """
    scratch = Path(os.environ.get("TMPDIR", "/tmp"))
    base_rss = _own_rss_bytes()
    stamp = f"{os.getpid()}-{time.monotonic_ns()}"
    out_path = scratch / f"trainjobs-hostile-{stamp}.out"
    err_path = scratch / f"trainjobs-hostile-{stamp}.err"
    in_path = scratch / f"trainjobs-hostile-{stamp}.in"
    if isinstance(stdin, Path):
        stdin_file = stdin
    else:
        in_path.write_bytes(stdin or b"")
        stdin_file = in_path
    old_env = dict(os.environ)
    try:
        out_fd = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        err_fd = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        in_fd = os.open(stdin_file, os.O_RDONLY | os.O_NONBLOCK)
        os.set_blocking(in_fd, True)
        if env is not None:
            os.environ.update(env)
        pid = os.fork()
        if pid == 0:
            _child(argv, cwd, in_fd, out_fd, err_fd)
        os.environ.clear()
        os.environ.update(old_env)
        for fd in (out_fd, err_fd, in_fd):
            os.close(fd)
        hung = False
        deadline = time.monotonic() + WALL_SECONDS
        while True:
            waited, status, usage = os.wait4(pid, os.WNOHANG)
            if waited:
                break
            if time.monotonic() > deadline:
                hung = True
                os.kill(pid, signal.SIGKILL)
                _, status, usage = os.wait4(pid, 0)
                break
            time.sleep(0.01)
        code = -1 if hung else os.waitstatus_to_exitcode(status)
        return Outcome(
            code=code,
            stdout=_read_all(out_path),
            stderr=_read_all(err_path),
            cpu_seconds=usage.ru_utime + usage.ru_stime,
            # ru_maxrss is in KiB on Linux and counts the pages shared with the parent.
            rss_growth_bytes=max(0, usage.ru_maxrss * 1024 - base_rss),
            hung=hung,
        )
    finally:
        os.environ.clear()
        os.environ.update(old_env)
        for path in (out_path, err_path, in_path):
            path.unlink(missing_ok=True)


def run_cli_process(
    argv: Sequence[str],
    cwd: Path,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = WALL_SECONDS,
) -> subprocess.CompletedProcess[str]:
    """``python -m trainjobs ARGV`` in a fresh interpreter, as a user's shell runs it."""
    return subprocess.run(
        [sys.executable, "-m", "trainjobs", *argv],
        cwd=cwd,
        input=stdin.decode() if stdin is not None else "",
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def assert_bounded(outcome: Outcome) -> None:
    """The command ended on its own, within the CPU and memory bounds, without a traceback."""
    assert not outcome.hung, f"hung (killed after {WALL_SECONDS:.0f} s)\n{outcome.stderr}"
    assert outcome.cpu_seconds < CPU_SECONDS, f"{outcome.cpu_seconds:.1f} s of CPU"
    assert outcome.rss_growth_bytes < RSS_GROWTH_BYTES, (
        f"memory grew by {outcome.rss_growth_bytes >> 20} MiB"
    )
    for marker in TRACEBACK_MARKERS:
        assert marker not in outcome.stderr, outcome.stderr


def assert_refused(outcome: Outcome, *fragments: str) -> None:
    """Exit 2 with a message holding every fragment, within bounds, no traceback."""
    assert_bounded(outcome)
    assert outcome.code == 2, (outcome.code, outcome.stderr)
    assert outcome.stderr.strip(), "a refusal says why"
    for fragment in fragments:
        assert fragment in outcome.stderr, (fragment, outcome.stderr)


@dataclass(frozen=True)
class TreeState:
    """Every entry below a folder: its kind, mode and content digest (links not followed)."""

    root: Path
    entries: Mapping[str, tuple[str, int, str]]

    @classmethod
    def of(cls, root: Path, skip: Iterable[str] = ()) -> TreeState:
        """Read the tree now, leaving out the relative paths in ``skip`` (and what is below)."""
        skipped = tuple(skip)
        entries: dict[str, tuple[str, int, str]] = {}
        for path in sorted(root.rglob("*")):
            rel = path.relative_to(root).as_posix()
            if any(rel == s or rel.startswith(s.rstrip("/") + "/") for s in skipped):
                continue
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                entries[rel] = ("link", info.st_mode, os.readlink(path))
            elif stat.S_ISREG(info.st_mode):
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                entries[rel] = ("file", info.st_mode, digest)
            else:
                entries[rel] = ("other", info.st_mode, "")
        return cls(root, entries)

    def changes(self, later: TreeState) -> list[str]:
        """The relative paths added, removed or changed between this state and ``later``."""
        names = set(self.entries) | set(later.entries)
        return sorted(n for n in names if self.entries.get(n) != later.entries.get(n))


def cpu_limit_preexec(seconds: int = int(CPU_SECONDS) * 4) -> None:
    """For subprocess ``preexec_fn``: a hard CPU limit, so a runaway child dies on its own."""
    resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds))
