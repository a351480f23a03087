# Types of the extension module (python/src/module.cpp).
from typing import List, Tuple

__version__: str

def version_text() -> str: ...
def run_cli(args: List[str]) -> Tuple[int, bytes, bytes]: ...
