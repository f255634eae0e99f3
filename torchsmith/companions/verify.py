"""What a companion wheel must hold: a Requires-Dist that pins exactly the torch it was built
against (so pip can never swap that torch), and ops that load and work next to that torch in a
fresh venv (the smoke scripts below write their own JPEG, PNG and WAV files)."""

from __future__ import annotations

import zipfile
from pathlib import Path

from torchsmith.errors import VerifyError
from torchsmith.inspect.meta import torch_requirements

VISION_SMOKE = """
import json, sys, pathlib
import torch, torchvision
from PIL import Image
from torchvision import io, ops
work = pathlib.Path(sys.argv[1])
boxes = torch.tensor([[0, 0, 10, 10], [1, 1, 11, 11], [50, 50, 60, 60]], dtype=torch.float)
keep = ops.nms(boxes, torch.tensor([0.9, 0.8, 0.7]), 0.5)
assert keep.tolist() == [0, 2], keep
ones = torch.ones(1, 1, 8, 8)
pooled = ops.roi_align(ones, [torch.tensor([[0.0, 0.0, 4.0, 4.0]])], output_size=(2, 2))
assert pooled.shape == (1, 1, 2, 2) and torch.allclose(pooled, torch.ones(1, 1, 2, 2)), pooled
red = Image.new("RGB", (16, 12), (255, 0, 0))
red.save(work / "red.png")
red.save(work / "red.jpg", quality=95)
png = io.decode_image(io.read_file(str(work / "red.png")))
jpg = io.decode_image(io.read_file(str(work / "red.jpg")))
assert png.shape == (3, 12, 16) and png[0].min() == 255 and png[1].max() == 0, png.shape
assert jpg.shape == (3, 12, 16) and jpg[0].float().mean() > 240 and jpg[1].float().mean() < 15
print(json.dumps({"torch": torch.__version__, "torchvision": torchvision.__version__,
                  "nms": keep.tolist(), "png": list(png.shape), "jpeg": list(jpg.shape)}))
"""

AUDIO_SMOKE = """
import json, math, struct, sys, pathlib, wave
import torch, torchaudio
work = pathlib.Path(sys.argv[1])
rate, n = 16000, 1600
samples = [int(12000 * math.sin(2 * math.pi * 440 * i / rate)) for i in range(n)]
with wave.open(str(work / "tone.wav"), "wb") as out:
    out.setnchannels(1); out.setsampwidth(2); out.setframerate(rate)
    out.writeframes(struct.pack("<%dh" % n, *samples))
wav, sr = torchaudio.load(str(work / "tone.wav"))
assert sr == rate and tuple(wav.shape) == (1, n), (sr, wav.shape)
half = torchaudio.functional.resample(wav, rate, rate // 2)
assert tuple(half.shape) == (1, n // 2), half.shape
from torchaudio._extension import _IS_TORCHAUDIO_EXT_AVAILABLE
assert _IS_TORCHAUDIO_EXT_AVAILABLE, "torchaudio's compiled extension did not load"
print(json.dumps({"torch": torch.__version__, "torchaudio": torchaudio.__version__,
                  "loaded": list(wav.shape), "resampled": list(half.shape)}))
"""

SMOKE_SCRIPTS = {"torchvision": VISION_SMOKE, "torchaudio": AUDIO_SMOKE}
SMOKE_EXTRAS: dict[str, list[str]] = {"torchvision": [], "torchaudio": ["soundfile"]}
"""Runtime packages a smoke test needs besides the wheels (torchaudio.load's backend: the
build has neither FFmpeg nor sox)."""


def metadata(wheel: Path) -> str:
    """The METADATA file of ``wheel``."""
    with zipfile.ZipFile(wheel) as zf:
        names = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        if len(names) != 1:
            raise VerifyError(f"{wheel.name} has no single METADATA file", "rebuild the wheel")
        return zf.read(names[0]).decode("utf-8", errors="replace")


def check_torch_pin(wheel: Path, torch_version: str) -> str:
    """The wheel's torch requirement, which must be exactly ``torch==torch_version``."""
    reqs = torch_requirements(metadata(wheel))
    wanted = f"=={torch_version}"
    if len(reqs) == 1 and str(reqs[0].specifier) == wanted and reqs[0].marker is None:
        return str(reqs[0])
    shown = ", ".join(str(r) for r in reqs) or "no torch requirement"
    raise VerifyError(
        f"{wheel.name} requires {shown}; it was built against torch {torch_version} and must "
        f"require exactly torch{wanted} (else pip may replace that torch)",
        "the build's PYTORCH_VERSION did not reach setup.py: check the companion's build log",
    )
