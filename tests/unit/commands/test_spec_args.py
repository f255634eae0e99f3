"""Every spec key can be given on the command line (or is documented as file-only), and the
flags' choices are the spec's own closed sets."""

from __future__ import annotations

import argparse
from typing import get_args

from torchsmith.commands.spec_args import add_spec_arguments, cli_values
from torchsmith.spec import (
    Backend,
    BuildSpec,
    CacheKind,
    CompanionSource,
    Features,
    Linking,
    Output,
)

FILE_ONLY: frozenset[str] = frozenset({"images"})
"""Spec keys with no flag (docs/options.md says so for each): the training images ([[images]]
tables of a spec file)."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    add_spec_arguments(parser)
    return parser


def test_every_top_level_key_has_a_flag() -> None:
    values, _ = cli_values(_parser().parse_args([]))
    nested = {"features", "linking", "nccl", "cache", "companion_source", "companion_without"}
    assert set(BuildSpec.model_fields) - nested - FILE_ONLY <= set(values)


def test_every_feature_and_linking_key_is_reachable() -> None:
    names = list(Features.model_fields)
    args = _parser().parse_args(["--enable", ",".join(names)])
    values, problems = cli_values(args)
    assert not problems and {f"features.{n}" for n in names} <= set(values)
    links = [f"{lib}=static" for lib in Linking.model_fields]
    values, problems = cli_values(_parser().parse_args(["--link", ",".join(links)]))
    assert not problems and {f"linking.{lib}" for lib in Linking.model_fields} <= set(values)


def test_choices_come_from_the_spec_literals() -> None:
    actions = {a.dest: a for a in _parser()._actions}
    assert tuple(actions["backend"].choices or ()) == get_args(Backend)
    assert tuple(actions["outputs"].choices or ()) == get_args(Output)
    assert tuple(actions["cache"].choices or ()) == get_args(CacheKind)


def test_nccl_root_has_a_flag() -> None:
    values, _ = cli_values(_parser().parse_args(["--nccl-root", "/usr"]))
    assert values["nccl.root"] == "/usr"


def test_every_companion_has_a_source_flag_and_a_bad_one_is_named() -> None:
    argv = [f"--companion-source={n}=path:/src/{n}" for n in CompanionSource.model_fields]
    values, problems = cli_values(_parser().parse_args(argv))
    assert not problems
    assert values["companion_source.torchvision"] == "path:/src/torchvision"
    _, problems = cli_values(_parser().parse_args(["--companion-source", "vision=path:/src"]))
    [problem] = problems
    assert "'vision=path:/src' is not NAME=SOURCE" in problem.what
    assert "torchvision, torchaudio or torchtext" in problem.fix
