"""Two per-resource costs of the Python SDK that the stack program gets nothing from.

Measured on a 256-worker pods-target stack through the real engine (issue 35,
BENCHMARKS.md "Big jobs"):

* **Debug messages as blocking calls.** For every resource the SDK sends four
  ``log.debug`` messages ("registering resource …", "… prepared", "… successful") to
  the engine, each a synchronous gRPC call, whether or not anyone shows debug output:
  2,094 calls, 3.3 of the program's 12.4 s in a ``pulumi preview`` that changed nothing.
* **A stack trace per resource, kept in the state.** The SDK records every Python frame
  from the interpreter's start to the resource's constructor, and the engine stores
  them in the state beside each object. For the stack program these frames are
  trainjobs' own internals (``register.py#212`` for every object), never the user's
  source, which is a YAML stack file: 1.8 kB per object, 8.6 % of the state.

:func:`lighten` turns both off for the process. The stack program (this project's
``__main__.py``) and the component provider (``python -m trainjobs.provider``, which
registers the components' objects for YAML, TypeScript and Go programs) call it; a
Python program of the user's importing the components keeps the SDK's behaviour.
``TRAINJOBS_SDK_DEBUG=1`` keeps both, to debug trainjobs itself with ``pulumi up --debug``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pulumi
import pulumi.runtime.resource as sdk_resource
from pulumi.runtime.proto import source_pb2

KEEP_ENV = "TRAINJOBS_SDK_DEBUG"
"""Set to ``1`` to keep the SDK's debug messages and stack traces."""


def _no_debug(*_args: Any, **_kwargs: Any) -> None:
    """Stands for ``pulumi.log.debug``: the message is dropped."""


def _no_stack_trace() -> source_pb2.StackTrace:
    """Stands for the SDK's stack capture: no frames, so no source position either."""
    return source_pb2.StackTrace()


def lighten() -> Callable[[], None]:
    """Drop the SDK's per-resource debug messages and stack traces in this process.

    Returns what undoes it (tests use it). Does nothing when ``TRAINJOBS_SDK_DEBUG`` is
    set. The SDK looks both functions up by module attribute at each call, so
    replacing the attributes is enough; ``tests/components/test_lean_sdk.py`` fails
    if a new SDK renames them.
    """
    if os.environ.get(KEEP_ENV, "") not in ("", "0"):
        return lambda: None
    saved_debug = pulumi.log.debug
    saved_trace = sdk_resource._get_stack_trace
    pulumi.log.debug = _no_debug
    sdk_resource._get_stack_trace = _no_stack_trace

    def undo() -> None:
        pulumi.log.debug = saved_debug
        sdk_resource._get_stack_trace = saved_trace

    return undo
