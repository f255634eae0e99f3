"""``torchsmith rebuild MANIFEST``: the recorded request planned again (:mod:`.plan_check`: it
must give the recorded plan), built by the ordinary pipeline in a new workspace (:mod:`.run`),
the wheels compared (:mod:`torchsmith.attest.compare`)."""
