"""Log and environment diagnosis: ``diagnose`` a failed build's log, list the
``warnings_that_changed_result`` of a successful one, and check the machine (``envcheck``)."""

from torchsmith.doctor.models import Diagnosis, ErrorBlock, Evidence, Finding
from torchsmith.doctor.scan import diagnose, warnings_that_changed_result

__all__ = [
    "Diagnosis",
    "ErrorBlock",
    "Evidence",
    "Finding",
    "diagnose",
    "warnings_that_changed_result",
]
