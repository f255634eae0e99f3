"""Parts left out of a companion's build (``companion_without.<name>``): refused where the planned
release has no switch for the part (the variable would be read by nothing, and the part built
after all), else one variable of the companion's build per part, with its reason. Pure."""

from __future__ import annotations

from torchsmith.plan_types import EnvValue
from torchsmith.planner.context import Ctx
from torchsmith.spec_companion_parts import has_switch, part, parts_of


def parts_ok(ctx: Ctx, name: str, version: str) -> bool:
    """Whether release ``version`` of companion ``name`` reads the switch of every part the
    spec leaves out of it (a problem recorded for each one it does not)."""
    ok = True
    for given in ctx.spec.companion_without.of(name):
        p = part(name, given)
        if p is None or has_switch(p, version):
            continue  # an unknown part never gets here: the spec refused it at load
        ok = False
        ctx.problem(
            f"companion_without.{name} = {given}: {name} {version}'s build has no switch for "
            f"it ({p.switch} is read by {name} {p.first} to {p.last}; {p.source})",
            f"drop {given} from --companion-without {name}=… (companion_without.{name}), or "
            f"build against a torch paired with {name} {p.first} to {p.last} (`torchsmith kb "
            "release VERSION` names a torch's companions)",
            f"companion_without.{name}",
        )
    return ok


def without_env(name: str, version: str, parts: tuple[str, ...]) -> list[EnvValue]:
    """The switch of each part left out, in the order of the companion's known parts."""
    return [
        EnvValue(
            name=p.switch,
            value="0",
            reason=f"{p.what} left out of the build (companion_without.{name} = {p.name}): "
            f"{name} {version} reads {p.switch} ({p.reader.format(v=version)}; so do "
            f"{p.first} to {p.last}, sources in torchsmith/spec_companion_parts.py)",
        )
        for p in parts_of(name)
        if p.name in parts
    ]



def unplanned(ctx: Ctx, planned: list[str]) -> None:
    """Parts of a companion that ``--with auto`` did not plan (no release of it is paired with
    this torch) are refused, not dropped: accepted means left out of a built companion."""
    asked = {c.split("=")[0] for c in ctx.spec.companions}
    if "auto" not in asked:
        return  # not asked at all: planner/support.py's refusal says so
    without = ctx.spec.companion_without
    for name in [n for n in type(without).model_fields if without.of(n) and n not in planned]:
        if name in asked:
            continue  # asked by name: its own refusal says why it is not planned
        ctx.problem(
            f"companion_without.{name} = {','.join(without.of(name))}, but --with auto plans no "
            f"{name} for this torch (the knowledge base pairs none with it)",
            f"drop --companion-without {name}=… (companion_without.{name})",
            f"companion_without.{name}",
        )
