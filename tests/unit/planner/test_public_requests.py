"""Issue 24 item 4: public build requests, table-driven (tests/fixtures/plan/public-requests.toml).
Each row is a user's request from a public thread, planned against an ideal recorded host
(``--host-facts`` tests/fixtures/plan/host-ci.json): a valid combination plans (with the
warnings the row names: "untested" for a CUDA outside the official wheel list, the companions
paired with the torch), an invalid one is refused naming the numbers of the way out. Each row
names the primary source that settles its answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import tomllib

from torchsmith import kb
from torchsmith.errors import PlanError
from torchsmith.host.model import HostFacts
from torchsmith.plan import resolve
from torchsmith.spec_sources import resolve_spec

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "plan"
ROWS: list[dict[str, Any]] = tomllib.loads(
    (FIXTURES / "public-requests.toml").read_text(encoding="utf-8")
)["request"]
HOST = HostFacts.model_validate_json((FIXTURES / "host-ci.json").read_text(encoding="utf-8"))


def answer(ask: dict[str, Any]) -> tuple[str, str]:
    """('plan', warnings and companions) or ('refuse', the rendered refusal)."""
    cli = {k: tuple(v) if isinstance(v, list) else v for k, v in ask.items()}
    try:
        plan = resolve(resolve_spec(cli=cli), kb.load(), HOST)
    except PlanError as exc:
        return "refuse", exc.render()
    builds = plan.companion_build.builds if plan.companion_build else []
    said = [f"{b.name} {b.version}" for b in builds] + list(plan.warnings)
    return "plan", "\n".join(said)


def test_the_table_holds_at_least_60_sourced_public_requests() -> None:
    assert len(ROWS) >= 60
    for row in ROWS:
        assert row["thread"].startswith("https://") and row["source"], row
        assert row["expect"] in {"plan", "refuse"}, row
        assert row["expect"] == "plan" or row["said"], f"a refusal names its numbers: {row}"


@pytest.mark.parametrize("row", ROWS, ids=[f"{i:02d}" for i in range(len(ROWS))])
def test_a_public_request_gets_the_answer_its_source_settles(row: dict[str, Any]) -> None:
    outcome, text = answer(row["ask"])
    assert outcome == row["expect"], f"{row['thread']}: {text[:800]}"
    for needle in row["said"]:
        assert needle in text, f"{row['thread']}: {needle!r} not in {text[:800]}"
