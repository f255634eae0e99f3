"""Crash and exception lines that used to get no finding at all (issue 25: a log that shows an
error must get one), each copied from the public report named beside it."""

from __future__ import annotations

import pytest

from torchsmith.doctor import diagnose

EXCERPTS = {
    # https://github.com/pytorch/pytorch/issues/149156 (2025-03-13): zsh's report of SIGILL
    "zsh-sigill": (
        [
            ">>> X = torch.rand(64000000)",
            ">>> torch.tanh(X)",
            "zsh: illegal hardware instruction  python",
        ],
        "generic-crash",
    ),
    # https://github.com/alterzero/RBPN-PyTorch/issues/58 (2020-07-13): Windows access violation
    "windows-access-violation": (
        ["Process finished with exit code -1073741819 (0xC0000005)"],
        "generic-crash",
    ),
    # https://github.com/innnky/so-vits-svc/issues/169 (2023-03-01): an exception class
    # whose name has no "Error"
    "process-raised-exception": (
        [
            "   raise ProcessRaisedException(msg, error_index, failed_process.pid)",
            "torch.multiprocessing.spawn.ProcessRaisedException: ",
        ],
        "generic-other",
    ),
}


@pytest.mark.parametrize("name", sorted(EXCERPTS))
def test_an_error_line_gets_a_finding(name: str) -> None:
    lines, expected = EXCERPTS[name]
    top = diagnose(lines).top
    assert top is not None and top.rule_id == expected
