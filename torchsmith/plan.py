"""The planner's public entry point: ``resolve(spec, kb, host) -> BuildPlan``.

The work is split by question under :mod:`torchsmith.planner` — ``versions`` (torch, companions,
Python, source), ``toolchain`` (CUDA, toolkit, compiler), ``archs`` (GPU targets),
``features``, ``environment`` (spelling per release), ``resources`` (jobs, disk), ``steps``.
"""

from torchsmith.plan_model import BuildPlan
from torchsmith.planner import resolve

__all__ = ["BuildPlan", "resolve"]
