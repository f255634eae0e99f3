"""L6: build targets are names, never options cmake could read (``--clean-first``)."""

from __future__ import annotations

import pytest

from torchsmith.errors import SpecError
from torchsmith.spec_sources import resolve_spec


@pytest.mark.parametrize("target", ["--clean-first", "-j1000", "c10 --target x", "a;b", "$(x)"])
def test_option_like_targets_are_refused(target: str) -> None:
    with pytest.raises(SpecError, match="not build target names"):
        resolve_spec(cli={"targets": ["c10", target]})


def test_real_targets_pass() -> None:
    names = ["c10", "torch_cpu", "caffe2/CMakeFiles/torch_cpu.dir/x.cpp.o", "lib/libc10.so"]
    assert resolve_spec(cli={"targets": names}).spec.targets == tuple(names)
