"""The stack program's lighter SDK: no debug calls and no stack traces per resource."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pulumi
import pulumi.runtime.resource as sdk_resource
import pytest

from tests.support.paths import EXAMPLES
from tests.support.pulumi_harness import run_program
from trainjobs.components import TrainingJob
from trainjobs.components.lean_sdk import KEEP_ENV, lighten
from trainjobs.spec import load_path


@pytest.fixture
def lightened(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv(KEEP_ENV, raising=False)
    undo = lighten()
    yield
    undo()


def _declare_job() -> None:
    TrainingJob("mnist", load_path(EXAMPLES / "tf-mnist" / "tfjob.yaml").jobs[0].job, target="pods")


def test_the_sdk_still_has_what_lighten_replaces() -> None:
    """A new SDK that renamed either function would make lighten() a silent no-op."""
    assert callable(sdk_resource._get_stack_trace)
    assert getattr(sdk_resource, "log", None) is pulumi.log
    assert callable(pulumi.log.debug)


def test_without_lighten_every_resource_sends_its_stack_trace() -> None:
    """The baseline the next test departs from: the SDK sends the frames."""
    registered = run_program(_declare_job)
    assert registered
    assert all(r.stack_frames > 3 for r in registered)


def test_lightened_resources_send_no_stack_trace(lightened: None) -> None:
    registered = run_program(_declare_job)
    assert registered
    assert [r.name for r in registered if r.stack_frames] == []


def test_lightened_sdk_sends_no_debug_messages(
    lightened: None, caplog: pytest.LogCaptureFixture
) -> None:
    # The mock engine turns each message the SDK sends into a record of the root logger.
    with caplog.at_level(logging.DEBUG):
        registered = run_program(_declare_job)
    assert registered
    assert [r.getMessage() for r in caplog.records if "resource" in r.getMessage()] == []


def test_the_sdk_sends_debug_messages_unless_lightened(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG):
        run_program(_declare_job)
    assert any("registering resource" in r.getMessage() for r in caplog.records)


def test_undo_restores_the_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEEP_ENV, raising=False)
    before = (pulumi.log.debug, sdk_resource._get_stack_trace)
    undo = lighten()
    assert (pulumi.log.debug, sdk_resource._get_stack_trace) != before
    undo()
    assert (pulumi.log.debug, sdk_resource._get_stack_trace) == before


def test_the_debug_setting_keeps_the_sdk_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEEP_ENV, "1")
    before = (pulumi.log.debug, sdk_resource._get_stack_trace)
    lighten()()
    assert (pulumi.log.debug, sdk_resource._get_stack_trace) == before
    registered = run_program(_declare_job)
    assert all(r.stack_frames for r in registered)
