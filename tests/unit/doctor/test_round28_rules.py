"""What was added for issue 25 after round 28's freeze (rounds 1-28 are train data; round 29
measured these: they met none of its logs first): round 28's three error logs without a finding.
Each line but the near misses is copied from a train log."""

from __future__ import annotations

from torchsmith.doctor import diagnose


def test_a_traceback_folded_into_one_line_is_read() -> None:
    """Round 28's amazon-sagemaker-examples#1378: SageMaker's failure reason holds the whole
    traceback on one line; its 'Traceback (most recent call last)' made it noise."""
    line = (
        'AlgorithmError: ExecuteUserScriptError: Command "/opt/conda/bin/python mnist.py" '
        'Traceback (most recent call last): File "mnist.py", line 8, in <module> import '
        "sagemaker_containers ModuleNotFoundError: No module named 'sagemaker_containers'"
    )
    assert diagnose([line]).findings[0].rule_id == "generic-import-module"


def test_a_traceback_header_alone_is_still_noise() -> None:
    assert diagnose(["Traceback (most recent call last):"]).findings == ()


def test_the_tail_of_torch_s_fork_message_is_the_fork_fact() -> None:
    """Round 28's spconv#408."""
    top = diagnose(["To use CUDA with multiprocessing, you must use the 'spawn' start method"])
    assert "fork" in top.findings[0].tags


def test_zsh_s_segmentation_fault_is_a_crash() -> None:
    """Round 28's ultralytics#14403."""
    line = "[1]    36482 segmentation fault  yolo export model=yolov8n.pt format=onnx"
    assert diagnose([line]).findings[0].rule_id == "generic-crash"
