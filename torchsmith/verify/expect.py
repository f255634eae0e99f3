"""What a build asked for, in the terms an inspection can check: SASS/PTX targets, CUDA version,
feature switches, linking modes, C++ ABI. Made from a :class:`BuildPlan`, or from a plan or
manifest JSON file (a manifest holds its plan under ``"plan"``)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from torchsmith.errors import UsageError
from torchsmith.plan_model import BuildPlan, hash_plan_data

_ARCH = re.compile(r"^(\d+)\.(\d+)([af]?)(\+PTX)?$", re.IGNORECASE)
_PLAN_HINT = "pass the JSON file that `torchsmith plan --json` or a build's manifest wrote"


@dataclass(frozen=True)
class Expectations:
    torch: str | None
    cuda: str | None
    sass: tuple[str, ...]
    ptx: tuple[str, ...]
    features: dict[str, bool] = field(default_factory=dict)
    linking: dict[str, str] = field(default_factory=dict)
    cxx11_abi: bool | None = None


def arch_targets(entries: list[str]) -> tuple[list[str], list[str]]:
    """['8.6', '9.0+PTX', '9.0a'] -> (['sm_86', 'sm_90', 'sm_90a'], ['compute_90'])."""
    sass: list[str] = []
    ptx: list[str] = []
    for entry in entries:
        match = _ARCH.match(str(entry).strip())
        if not match:
            raise UsageError(f"arch entry {entry!r} is not like '8.6', '9.0a' or '9.0+PTX'")
        number = f"{match.group(1)}{match.group(2)}{match.group(3).lower()}"
        sass.append(f"sm_{number}")
        if match.group(4):
            ptx.append(f"compute_{number}")
    return sass, ptx


def _abi(plan: BuildPlan) -> bool | None:
    value = plan.env_dict().get("_GLIBCXX_USE_CXX11_ABI")
    return None if value is None else value.strip() not in ("0", "")


def from_plan(plan: BuildPlan) -> Expectations:
    archs = plan.archs.value or []
    sass, ptx = arch_targets(list(archs)) if plan.cuda.value else ([], [])
    features = {k: d.value for k, d in plan.features.items() if isinstance(d.value, bool)}
    linking = {k: str(d.value) for k, d in plan.linking.items() if d.value is not None}
    return Expectations(
        torch=plan.torch.value or None,
        cuda=plan.cuda.value,
        sass=tuple(sass),
        ptx=tuple(ptx),
        features=features,
        linking=linking,
        cxx11_abi=_abi(plan),
    )


def _check_hash(plan: BuildPlan, written: object, origin: str, raw: dict[str, Any]) -> None:
    """``plan --json`` adds ``plan_hash``; a stale one means the plan was edited after — unless
    it is the hash of the JSON as written: then an older torchsmith wrote it, whose plan model
    lacked fields added since (their defaults change the hash, not the file)."""
    if written is None or written in (plan.plan_hash(), hash_plan_data(raw)):
        return
    raise UsageError(
        f"{origin}: plan_hash {written} does not match the plan it holds "
        f"({plan.plan_hash()}): the file was changed after `torchsmith plan --json` wrote it",
        "write it again with `torchsmith plan --json`, or delete the plan_hash key if you "
        "edited the expectations on purpose",
    )


def plan_from_json(data: Any, origin: str = "plan") -> BuildPlan:
    """A BuildPlan from plan JSON (``plan --json`` output, its ``plan_hash`` checked) or from a
    manifest holding it under ``"plan"``."""
    written = data.get("plan_hash") if isinstance(data, dict) else None
    if isinstance(data, dict) and isinstance(data.get("plan"), dict):
        data = data["plan"]
    if isinstance(data, dict):  # computed by `plan --json`, not plan fields
        data = {k: v for k, v in data.items() if k not in ("plan_hash", "ready")}
    raw: dict[str, Any] = data if isinstance(data, dict) else {}
    try:
        plan = BuildPlan.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise UsageError(
            f"{origin} is neither a build plan nor a manifest with one: {where}: {first['msg']}",
            _PLAN_HINT,
        ) from exc
    _check_hash(plan, written, origin, raw)
    return plan


def load_plan(path: Path) -> BuildPlan:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except IsADirectoryError as exc:
        raise UsageError(f"--plan {path} is a directory, not a plan file", _PLAN_HINT) from exc
    except OSError as exc:
        raise UsageError(f"--plan {path}: cannot read it: {exc.strerror}", _PLAN_HINT) from exc
    except UnicodeDecodeError as exc:
        raise UsageError(f"--plan {path} is not a text file", _PLAN_HINT) from exc
    except json.JSONDecodeError as exc:
        raise UsageError(f"--plan {path} is not JSON: {exc}", _PLAN_HINT) from exc
    except RecursionError as exc:
        raise UsageError(f"--plan {path} is nested too deeply to be a plan", _PLAN_HINT) from exc
    return plan_from_json(data, str(path))
