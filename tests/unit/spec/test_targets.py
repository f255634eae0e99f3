"""L6: build targets are names, never options cmake could read (``--clean-first``)."""

from __future__ import annotations

import argparse

import pytest

from torchsmith.commands.spec_args import add_spec_arguments, spec_from_args
from torchsmith.errors import SpecError
from torchsmith.spec_sources import resolve_spec


@pytest.mark.parametrize("target", ["--clean-first", "-j1000", "c10 --target x", "a;b", "$(x)"])
def test_option_like_targets_are_refused(target: str) -> None:
    with pytest.raises(SpecError, match="not build target names"):
        resolve_spec(cli={"targets": ["c10", target]})


def test_real_targets_pass() -> None:
    names = ["c10", "torch_cpu", "caffe2/CMakeFiles/torch_cpu.dir/x.cpp.o", "lib/libc10.so"]
    assert resolve_spec(cli={"targets": names}).spec.targets == tuple(names)


@pytest.mark.parametrize("key", ["targets", "gpus"])
def test_an_empty_item_in_a_spec_list_is_refused(key: str) -> None:
    with pytest.raises(SpecError, match="an empty item names nothing"):
        resolve_spec(cli={key: ["c10" if key == "targets" else "8.6", " "]})


@pytest.mark.parametrize(
    ("argv", "flag"),
    [(["--target", ""], "--target"), (["--gpu", "8.6,"], "--gpu"), (["--with", ","], "--with")],
)
def test_an_empty_item_on_the_command_line_is_refused_not_dropped(
    argv: list[str], flag: str
) -> None:
    """``--target ''`` used to start a whole build (the empty name was dropped)."""
    parser = argparse.ArgumentParser()
    add_spec_arguments(parser)
    args = parser.parse_args(["--torch", "1.13.1", "--cuda", "11.8", *argv])
    with pytest.raises(SpecError, match="an empty item names nothing") as caught:
        spec_from_args(args, env={})
    assert caught.value.problems[0].fix.startswith(f"name each item of {flag}")


@pytest.mark.parametrize("flag", ["--torch", "--python", "--output-dir", "--source", "--cuda"])
def test_an_empty_value_on_the_command_line_is_refused_not_defaulted(flag: str) -> None:
    """``--torch ''`` used to plan the newest release, as if the flag were not given."""
    parser = argparse.ArgumentParser()
    add_spec_arguments(parser)
    argv = ["--torch", "2.5.1", flag, ""] if flag != "--torch" else ["--cpu", flag, ""]
    with pytest.raises(SpecError, match=f"{flag} '': an empty value") as caught:
        spec_from_args(parser.parse_args(argv), env={})
    assert (
        caught.value.problems[0].fix == f"give {flag} a value, or leave {flag} out for its default"
    )
