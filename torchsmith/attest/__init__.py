"""Attestations of a built wheel, written beside it by the ``attest`` step and checked by
``verify``: a CycloneDX SBOM (:mod:`.sbom`: source, submodules, fixes, toolchain, the build
environment's Python packages, the libraries repair bundled, every file of the wheel with its
sha256), an in-toto Statement with a SLSA provenance predicate (:mod:`.provenance`: the plan as
external parameters, the sources with their digests) and, with ``sign_key``, a DSSE envelope of
that statement signed with Ed25519 (:mod:`.dsse`). File names: :mod:`.files`."""
