"""What runs on this machine, read from /proc and by connecting: for before/after lists."""

from __future__ import annotations

import socket
from collections.abc import Iterable
from pathlib import Path


def processes_mentioning(text: str) -> list[str]:
    """``pid command`` of each live process whose command line or environment holds
    ``text`` (every sandbox program names its folder in one or the other)."""
    found = []
    needle = text.encode()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            environ = (proc / "environ").read_bytes()
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state in ("Z", "X"):
            continue
        if needle in cmdline or needle in environ:
            program = cmdline.split(b"\0")[0].decode(errors="replace")
            found.append(f"{proc.name} {program}")
    return sorted(found)


def listening(ports: Iterable[int]) -> list[int]:
    """The ports of ``ports`` something accepts connections on at 127.0.0.1."""
    held = []
    for port in ports:
        with socket.socket() as s:
            s.settimeout(1)
            if s.connect_ex(("127.0.0.1", port)) == 0:
                held.append(port)
    return held
