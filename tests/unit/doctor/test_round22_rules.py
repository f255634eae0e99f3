"""What was added for issue 25 before the round 22 freeze (rounds 1-21 are train data): round 21's
misses where a rule or fact existed for the cause but not for the wording its log used."""

from __future__ import annotations

import pytest

from tests.unit.doctor.rule_cases import fires_as_wanted, top_rule
from torchsmith.doctor import diagnose


@pytest.mark.parametrize(
    ("text", "want"),
    [
        # torch's arch warning wrapped after 'is not compatible' (round 21's runpod#114)
        ("UserWarning: NVIDIA B200 with CUDA capability sm_100 is not compatible\n"
         "with the current PyTorch installation.", "gpu-arch-not-in-build"),
        ("UserWarning: CUDA initialization: CUDA unknown error - this may be due to an "
         "incorrectly set up environment", "cuda-init-unknown-error"),
        ('RuntimeError: invalid hash value (expected "8e4777a0", got "43edeb88")',
         "checkpoint-file-truncated"),
        ("AttributeError: 'module' object has no attribute '_rebuild_tensor_v2'",
         "torch-too-old-for-code"),
        ("AttributeError: module 'torch._utils' has no attribute '_rebuild_parameter'",
         "torch-too-old-for-code"),
        # another private helper is not a checkpoint from a newer torch
        ("AttributeError: 'Tensor' object has no attribute '_rebuild'", "!torch-too-old-for-code"),
        ('  File "C:\\x\\lib\\multiprocessing\\spawn.py", line 236, in prepare\n'
         "    _fixup_main_from_path(data['init_main_from_path'])\n"
         '  File "C:\\x\\lib\\multiprocessing\\spawn.py", line 287, in _fixup_main_from_path',
         "windows-spawn-reruns-main"),
        # a fork-started worker's traceback is not spawn's
        ('  File "/usr/lib/python3.10/multiprocessing/process.py", line 108, in run',
         "!windows-spawn-reruns-main"),
    ],
)  # fmt: skip
def test_the_rule_fires_on_its_wording_and_not_on_the_near_miss(text: str, want: str) -> None:
    assert fires_as_wanted(text, want), (text, want, top_rule(text))


def test_a_socks_proxy_without_pysocks_is_a_network_cause() -> None:
    line = (
        "ERROR: Could not install packages due to an OSError: Missing dependencies for SOCKS "
        "support."
    )
    top = diagnose([line]).top
    assert top is not None and top.generic and "network" in top.tags
    assert "pysocks" in top.fix.lower() and "ALL_PROXY" in top.fix
