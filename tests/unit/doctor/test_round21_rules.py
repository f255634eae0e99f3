"""What was added for issue 25 before the round 21 freeze (rounds 1-20 are train data), besides
the nearest known case (test_similar.py): round 20's three logs with an error and no finding.

* A line holding "Learning" (``LearningRateLogger``, ``deep_learning``) was read as a warning —
  the test looked for "arning" — so ``ImportError: cannot import name 'LearningRateLogger'`` had
  no finding at all.
* pip's ResolutionImpossible explanation quoted alone: ``torchvision 0.15.2 depends on
  torch==2.0.1``.
* conda's plan that installs the CPU-only pytorch (a warning: the install succeeds, CUDA is off).
"""

from __future__ import annotations

import pytest

from tests.unit.doctor.rule_cases import fires_as_wanted, top_rule
from torchsmith.doctor import diagnose
from torchsmith.doctor.classify import classify


@pytest.mark.parametrize(
    "line",
    [
        "ImportError: cannot import name 'LearningRateLogger' from 'pytorch_lightning.callbacks'",
        "RuntimeError: deep_learning/train.py failed to open the checkpoint",
    ],
)
def test_learning_is_not_a_warning(line: str) -> None:
    assert classify(line).kind == "error"
    assert top_rule(line) != "none"


@pytest.mark.parametrize(
    "line",
    [
        "UserWarning: CUDA initialization: Found no NVIDIA driver on your system",
        "warning: unused variable 'n' [-Wunused-variable]",
    ],
)
def test_a_warning_is_still_a_warning(line: str) -> None:
    assert classify(line).kind in ("soft", "other")


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("The user requested torch==1.13.0\ntorchvision 0.15.2 depends on torch==2.0.1",
         "companion-requires-other-torch"),
        ("torchaudio 2.0.2 depends on torch==2.0.1", "companion-requires-other-torch"),
        # another package's pin on torch is the resolver's conflict, not a companion's
        ("lightning 2.0 depends on numpy>=1.17.2", "!companion-requires-other-torch"),
        ("  cpu-only           pytorch/linux-64::cpu-only-1.0-0", "conda-plans-cpu-only-torch"),
        ("  pytorch            pytorch/linux-64::pytorch-2.1.0-py3.10_cpu_0",
         "conda-plans-cpu-only-torch"),
        # the CUDA build in a plan is what was wanted
        ("  pytorch            pytorch/linux-64::pytorch-2.1.0-py3.10_cuda12.1_cudnn8.9.2_0",
         "!conda-plans-cpu-only-torch"),
    ],
)  # fmt: skip
def test_the_rule_fires_on_its_wording_and_not_on_the_near_miss(text: str, want: str) -> None:
    assert fires_as_wanted(text, want), (text, want, top_rule(text))


def test_a_cpu_only_plan_is_a_warning_not_the_cause() -> None:
    diagnosis = diagnose(["  pytorch   pytorch/linux-64::pytorch-2.1.0-py3.10_cpu_0"])
    assert diagnosis.top is not None and diagnosis.top.severity == "warning"
    assert diagnosis.cause is None and "cpuonly" in diagnosis.top.fix
