"""``companion_without.<name>``: the parts left out of a companion's build, one validation for the
flag (``--companion-without torchaudio=rnnt,rir``), the variable
(``TORCHSMITH_COMPANION_WITHOUT_TORCHAUDIO``) and the spec key (a TOML list)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from torchsmith.commands.spec_args import add_spec_arguments, cli_values
from torchsmith.errors import SpecError
from torchsmith.spec_companion_parts import PARTS, has_switch, part
from torchsmith.spec_sources import ResolvedSpec, resolve_spec


def _flags(*argv: str) -> ResolvedSpec:
    parser = argparse.ArgumentParser()
    add_spec_arguments(parser)
    values, problems = cli_values(parser.parse_args(list(argv)))
    if problems:
        raise SpecError(problems)
    return resolve_spec(cli=values)


def _toml(tmp_path: Path, body: str) -> ResolvedSpec:
    path = tmp_path / "spec.toml"
    path.write_text(body)
    return resolve_spec(file=path)


def _refusal(make: object) -> str:
    with pytest.raises(SpecError) as info:
        make()  # type: ignore[operator]
    return info.value.render()


def test_flag_variable_and_key_give_the_same_spec(tmp_path: Path) -> None:
    flag = _flags("--companion-without", "torchaudio=rnnt,rir")
    repeated = _flags(
        "--companion-without", "torchaudio=rnnt", "--companion-without=torchaudio=rir"
    )
    env = resolve_spec(env={"TORCHSMITH_COMPANION_WITHOUT_TORCHAUDIO": "rnnt, rir"})
    toml = _toml(tmp_path, '[companion_without]\ntorchaudio = ["rnnt", "rir"]\n')
    for resolved in (flag, repeated, env, toml):
        assert resolved.spec.companion_without.of("torchaudio") == ("rnnt", "rir")
        assert resolved.spec.companion_without.of("torchvision") == ()
    assert flag.origin("companion_without.torchaudio") == "cli"
    assert env.origin("companion_without.torchaudio") == "env"
    assert toml.origin("companion_without.torchaudio") == "file"
    assert flag.recorded()["spec"]["companion_without"] == {"torchaudio": ["rnnt", "rir"]}


def test_the_flag_overrides_the_variable_which_overrides_the_file(tmp_path: Path) -> None:
    path = tmp_path / "spec.toml"
    path.write_text('[companion_without]\ntorchaudio = ["align"]\n')
    env = {"TORCHSMITH_COMPANION_WITHOUT_TORCHAUDIO": "rir"}
    assert resolve_spec(file=path, env=env).spec.companion_without.torchaudio == ("rir",)
    cli = {"companion_without.torchaudio": ("rnnt",)}
    both = resolve_spec(file=path, env=env, cli=cli)
    assert both.spec.companion_without.torchaudio == ("rnnt",)
    assert both.origin("companion_without.torchaudio") == "cli"


def test_a_part_given_twice_is_kept_once() -> None:
    spec = _flags("--companion-without", "torchaudio=rir,rir,rnnt").spec
    assert spec.companion_without.torchaudio == ("rir", "rnnt")


def test_an_unknown_part_is_refused_naming_the_known_ones_in_every_layer(tmp_path: Path) -> None:
    texts = [
        _refusal(lambda: _flags("--companion-without", "torchaudio=rnnt,sox")),
        _refusal(lambda: resolve_spec(env={"TORCHSMITH_COMPANION_WITHOUT_TORCHAUDIO": "sox"})),
        _refusal(lambda: _toml(tmp_path, '[companion_without]\ntorchaudio = ["sox"]\n')),
    ]
    for text in texts:
        assert "['sox'] is not a part of torchaudio that its build can leave out" in text
        assert "known parts: rnnt (BUILD_RNNT), rir (BUILD_RIR), align (BUILD_ALIGN)" in text
    assert "from cli" in texts[0] and "from env" in texts[1] and "from file" in texts[2]


def test_torchvision_has_no_part_to_leave_out() -> None:
    text = _refusal(lambda: _flags("--companion-without", "torchvision=nms"))
    assert "['nms'] cannot be left out of torchvision" in text
    assert "has no switch that leaves one of its parts out" in text
    assert "drop companion_without.torchvision" in text


def test_a_malformed_flag_and_empty_items_are_refused(tmp_path: Path) -> None:
    text = _refusal(lambda: _flags("--companion-without", "rnnt"))
    assert "--companion-without 'rnnt' is not NAME=PARTS" in text
    assert "torchaudio=rnnt,rir" in text
    assert "'audio=rnnt' is not NAME=PARTS" in _refusal(
        lambda: _flags("--companion-without", "audio=rnnt")
    )
    assert "an empty item names nothing" in _refusal(
        lambda: _flags("--companion-without", "torchaudio=rnnt,")
    )
    env = {"TORCHSMITH_COMPANION_WITHOUT_TORCHAUDIO": ""}
    assert "TORCHSMITH_COMPANION_WITHOUT_TORCHAUDIO" in _refusal(lambda: resolve_spec(env=env))
    text = _refusal(lambda: _toml(tmp_path, '[companion_without]\ntorchaudio = "rnnt"\n'))
    assert "companion_without.torchaudio" in text  # a list, not a string


def test_every_part_names_its_switch_its_releases_and_a_source() -> None:
    for p in PARTS:
        assert p.switch.startswith("BUILD_") and p.source.startswith("pytorch/audio@v")
        assert has_switch(p, p.first) and has_switch(p, p.last)
    rir, rnnt = part("torchaudio", "rir"), part("torchaudio", "rnnt")
    assert rir is not None and rnnt is not None
    assert not has_switch(rir, "2.10.0") and not has_switch(rir, "2.0.0")
    assert not has_switch(rnnt, "0.9.0") and not has_switch(rnnt, "not-a-version")
    assert has_switch(rnnt, "2.6.0") and not has_switch(rnnt, "2.12.0")


def test_the_recorded_request_gives_the_same_parts_to_a_rebuild(tmp_path: Path) -> None:
    from torchsmith.rebuild.plan_check import request_of

    resolved = _flags("--with", "torchaudio", "--companion-without", "torchaudio=rir,rnnt")
    again = request_of({"request": resolved.recorded()}, tmp_path / "out")
    assert again.spec.companion_without == resolved.spec.companion_without
    assert again.origin("companion_without.torchaudio") == "cli"
