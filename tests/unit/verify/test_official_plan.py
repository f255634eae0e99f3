"""`--preset official` links CUDA as the official wheels do when their nvidia-* pins are
recorded, so the official wheel verifies against its own plan (round-3 trial O11); a manylinux
tag that promises an older glibc is a warning (the plan asks no tag)."""

from __future__ import annotations

from typing import Any

from tests.unit.planner.kb import ci_host
from torchsmith import kb
from torchsmith.plan import resolve
from torchsmith.planner.support import KNOWLEDGE_ONLY
from torchsmith.spec_sources import resolve_spec


def _linking(**cli: Any) -> dict[str, tuple[object, str]]:
    plan = resolve(resolve_spec(cli=cli), kb.load(), ci_host(), can=KNOWLEDGE_ONLY)
    return {lib: (d.value, d.origin) for lib, d in plan.linking.items()}


def test_official_preset_with_recorded_pins_links_pip_deps() -> None:
    official = {"preset": "official", "torch": "2.6.0", "accelerator": "12.4", "python": "3.11"}
    assert _linking(**official) == dict.fromkeys(("cuda", "cudnn", "nccl"), ("pip-deps", "kb"))
    mine = _linking(**official, **{"linking.cudnn": "dynamic"})
    assert mine["cudnn"] == ("dynamic", "user") and mine["cuda"] == ("pip-deps", "kb")


def test_without_the_preset_the_default_stays_dynamic() -> None:
    plain = _linking(torch="2.6.0", accelerator="12.4", python="3.11")
    assert plain["cuda"] == ("dynamic", "default")


def test_a_dishonest_manylinux_tag_is_a_warning() -> None:
    from pathlib import Path

    from torchsmith.inspect.model import Inspection
    from torchsmith.verify import verify_inspection
    from torchsmith.verify.expect import load_plan

    inspect = Path(__file__).resolve().parents[2] / "fixtures" / "inspect"
    insp = Inspection.model_validate_json((inspect / "inspect-2.14.1-cu130-wheel.json").read_text())
    assert insp.wheel is not None
    wheel = insp.wheel.model_copy(update={"honest": False, "glibc_allowed": "2.5",
                                          "problems": ["needs GLIBC_2.28 but the tag promises "
                                                       "glibc 2.5"]})  # fmt: skip
    checks = verify_inspection(
        insp.model_copy(update={"wheel": wheel}),
        load_plan(inspect / "plans" / "plan-2.14.1-cu130.json"),
    )
    tag = next(c for c in checks if c.name == "manylinux tag")
    assert tag.ok is False and tag.severity == "warning" and "cannot load" in tag.detail
    assert not [c for c in checks if c.ok is False and c.severity == "error"]
