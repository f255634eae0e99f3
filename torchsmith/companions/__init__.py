"""Domain libraries (torchvision, torchaudio, torchtext) built against the torch they will run
with (issue 11).

``--against`` names that torch — a wheel file, or ``python:/path/to/python`` for the torch an
interpreter imports — and :func:`~torchsmith.companions.facts.read_against` reads its real facts
(version, CUDA, C++ ABI, Python tag) with ``torchsmith inspect`` before anything is planned.
:mod:`torchsmith.planner.companions` plans each companion (source, environment with reasons),
:mod:`torchsmith.planner.companion_steps` gives each its own steps (environment, fetch, compile,
repair, verify, publish, conda) and :mod:`torchsmith.steps.companion` carries them out.
"""
