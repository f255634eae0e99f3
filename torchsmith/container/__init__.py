"""The container backend: base images as knowledge (:mod:`.images`, :mod:`.base`), the generated
Dockerfile (:mod:`.dockerfile`, :mod:`.training`), the build context (:mod:`.context`) and the
engines that build it (:mod:`.engines`), run through an executor like every other command."""
