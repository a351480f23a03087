"""proflint from Python: the C++ engine of the ``proflint`` CLI, in-process (docs/python.md).

>>> import proflint
>>> a = proflint.analyze("fixtures/sample_train.json.gz")
>>> a.to_dataframe()[["rank", "id", "severity", "estimated_savings_ms"]]
   rank                id severity  estimated_savings_ms
0     1  dataloader-stall     high            389.153162
1     2      amp-not-used     high            303.403423
2     3   pageable-memcpy      low             27.082454
3     4         host-sync      low              0.623167
4     5       sync-memcpy      low              0.000000
"""

from ._analysis import Analysis, Check, Finding, analyze
from ._compare import Comparison, compare
from ._engine import FindingsError, InputError, ProflintError, ProflintWarning
from ._store import Store, load, query
from ._torch import TraceHandler, on_trace_ready
from . import _core

#: The package version: the CLI's (``proflint --version``; CMake's project VERSION).
__version__: str = _core.__version__


def version_text() -> str:
    """What ``proflint --version`` prints: the version and the input libraries of this build."""
    return _core.version_text()


__all__ = [
    "Analysis", "Check", "Comparison", "Finding", "FindingsError", "InputError", "ProflintError",
    "ProflintWarning", "Store", "TraceHandler", "analyze", "compare", "load", "on_trace_ready", "query",
    "version_text", "__version__",
]
