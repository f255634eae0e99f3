"""What was added for issue 25 after round 24 (rounds 1-24 are train data; no blind round has
measured these yet): the error logs of rounds 23-24 that got no finding at all. Each line but the
near misses is copied from one of them."""

from __future__ import annotations

import pytest

from tests.unit.doctor.rule_cases import fires_as_wanted, top_rule
from torchsmith.doctor import diagnose


@pytest.mark.parametrize(
    ("text", "want"),
    [
        # round 23's ComfyUI#8984
        ("MPS backend out of memory (MPS allocated: 15.72 GiB, other allocations: 2.41 MiB, max "
         "allowed: 18.13 GiB). Tried to allocate 5.81 GiB on private pool.", "mps-out-of-memory"),
        # CUDA's own wording stays CUDA's rule
        ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
         "!mps-out-of-memory"),
    ],
)  # fmt: skip
def test_the_rule_fires_on_its_wording_and_not_on_the_near_miss(text: str, want: str) -> None:
    assert fires_as_wanted(text, want), (text, want, top_rule(text))


def test_a_launcher_reporting_a_signal_gets_a_finding() -> None:
    """Round 24's pytorch#176993: two DEBUG lines, the second saying the command exited with
    signal 4 (SIGILL)."""
    log = [
        "DEBUG Spawned child 7927 in process group 7907",
        "DEBUG Command exited with signal: Some(4)",
    ]
    assert diagnose(log).findings


def test_a_signal_handler_being_set_up_is_no_finding() -> None:
    assert diagnose(["INFO registering handler for signal SIGTERM"]).findings == ()
