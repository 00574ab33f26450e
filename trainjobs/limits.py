"""The bounds every input is held to, so no file, stream or typo can hang trainjobs or
exhaust the machine.

Each limit has a default no real stack meets and an environment variable that raises
it for the one run that needs more (``TRAINJOBS_MAX_FILE_BYTES=67108864 trainjobs
render big.yaml``). The variable is read when the limit is checked, never cached, so
there is no global configuration to reset between runs or tests. The README's
"Safety" section lists them all (a test keeps the list and this module in step).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from trainjobs.errors import TrainjobsError

__all__ = [
    "ALL",
    "FILES",
    "FILE_BYTES",
    "JOBS",
    "LOCAL_REPLICAS",
    "POD_COUNT",
    "STACK_PODS",
    "YAML_DEPTH",
    "YAML_NODES",
    "Limit",
    "LimitSettingError",
]


class LimitSettingError(TrainjobsError):
    """A ``TRAINJOBS_MAX_*`` environment variable is not a positive whole number."""


@dataclass(frozen=True)
class Limit:
    """One bound on the input.

    Attributes:
        env: the environment variable that overrides it, e.g. ``TRAINJOBS_MAX_FILE_BYTES``.
        default: the bound when the variable is unset.
        what: what is counted, in words, e.g. ``bytes in one input file``.
    """

    env: str
    default: int
    what: str

    def value(self) -> int:
        """The bound in force: the environment variable's value, else ``default``."""
        raw = os.environ.get(self.env)
        if raw is None or raw.strip() == "":
            return self.default
        try:
            value = int(raw.strip())
        except ValueError:
            value = 0
        if value < 1:
            raise LimitSettingError(
                f"{self.env} must be a positive whole number (the most {self.what}); "
                f"fix: unset it for the default {self.default}, or set e.g. "
                f"{self.env}={self.default * 2}"
            )
        return value

    def hint(self) -> str:
        """How to raise it, for a finding's fix."""
        return (
            f"check the input for a mistake; if it is right, raise the limit with "
            f"{self.env}=N (now {self.value()})"
        )

    def exceeded(self) -> str:
        """The message part naming the limit: ``trainjobs allows at most N <what>``."""
        return f"trainjobs allows at most {self.value():,} {self.what} ({self.env})"


FILE_BYTES = Limit("TRAINJOBS_MAX_FILE_BYTES", 4 * 1024 * 1024, "bytes in one input file")
"""One YAML file or stream (a stack, a job file, a render output, stdin). A Kubernetes
object is at most 1.5 MiB (etcd's limit); 4 MiB holds a few of the largest, and a job
file is a few KiB."""

FILES = Limit("TRAINJOBS_MAX_FILES", 1000, "files read for one stack")
"""Files one stack may read through ``file:`` entries, counting a file each time it is
named: a chain of files each naming the next twice would otherwise read 2^30 files."""

YAML_NODES = Limit("TRAINJOBS_MAX_YAML_NODES", 500_000, "values in one YAML file, aliases expanded")
"""Values (scalars, lists, mappings) a file holds once every alias (``*a``) is replaced
by what it names: ten aliases of ten aliases of … (a "billion laughs") is refused before
anything expands it. Every 100 characters of text count as one more value. A file with
more than a sixth as many lines and commas is refused before it is parsed. A job is a
few hundred values; a render of 1,000 pods about 100,000."""

YAML_DEPTH = Limit("TRAINJOBS_MAX_YAML_DEPTH", 100, "levels of nesting in one YAML file")
"""Lists and mappings inside each other. The deepest real input, a CRD's schema in a
render, nests under 50."""

POD_COUNT = Limit("TRAINJOBS_MAX_PODS_PER_JOB", 10_000, "pods in one job")
"""Pods one job may run (its replica counts added up)."""

STACK_PODS = Limit("TRAINJOBS_MAX_PODS", 20_000, "pods in one stack")
"""Pods all the jobs of one stack may run together: the pods target expands each one,
so a typo in a few jobs (20 jobs of 10,000) would otherwise use tens of GB."""

JOBS = Limit("TRAINJOBS_MAX_JOBS", 1000, "jobs in one stack")
"""Jobs one stack declares; each is checked and expanded on every command."""

LOCAL_REPLICAS = Limit("TRAINJOBS_MAX_LOCAL_REPLICAS", 256, "replicas in a job run-local runs")
"""Processes ``run-local`` runs for one job on this one machine; checked before the job
is expanded, which for thousands of replicas alone takes minutes."""

ALL: tuple[Limit, ...] = (
    FILE_BYTES,
    FILES,
    YAML_NODES,
    YAML_DEPTH,
    POD_COUNT,
    STACK_PODS,
    JOBS,
    LOCAL_REPLICAS,
)
"""Every limit, in the order the README lists them."""
