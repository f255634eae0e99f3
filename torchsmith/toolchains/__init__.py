"""Toolchain provisioning without root: CUDA toolkits (:mod:`.cuda`), the host compiler each
CUDA accepts (:mod:`.compiler`), Python environments (:mod:`.python`) and math libraries
(:mod:`.mathlibs`). Selection is pure (plan time); provisioning writes only into torchsmith's
own cache directory and records every package it used."""
