"""Previews that work anywhere: what a change to a stack would do, in the words of training.

``pulumi preview --diff`` needs the Pulumi CLI and a cluster; this package
needs neither. It compares two sets of Kubernetes objects — two render
outputs, a stack now and at a git ref, a stack now and its last preview, or a
stack and what a cluster holds — and says per object what applying would do
(create, update, replace, delete, by the Pulumi Kubernetes provider's own
replacement rules), and per job what that means: which Pods are recreated,
which jobs restart from their last checkpoint. Secret values never appear.

Layers: above ``check`` (it renders), beside ``components`` (no pulumi),
below ``cli``.
"""

from trainjobs.preview.compare import (
    StackPreview,
    diff_against,
    diff_outputs,
    preview_stack,
    render_side,
)
from trainjobs.preview.jsonout import plans_document, schema
from trainjobs.preview.live import Kubectl, LiveError
from trainjobs.preview.objects import PreviewObject, Side, load_side
from trainjobs.preview.plan import Action, FieldPlan, ObjectPlan, Plan, make_plan
from trainjobs.preview.report import print_plan, totals
from trainjobs.preview.rules import RULES, ReplaceRule
from trainjobs.preview.words import Story, explain

__all__ = [
    "RULES",
    "Action",
    "FieldPlan",
    "Kubectl",
    "LiveError",
    "ObjectPlan",
    "Plan",
    "PreviewObject",
    "ReplaceRule",
    "Side",
    "StackPreview",
    "Story",
    "diff_against",
    "diff_outputs",
    "explain",
    "load_side",
    "make_plan",
    "plans_document",
    "preview_stack",
    "print_plan",
    "render_side",
    "schema",
    "totals",
]
