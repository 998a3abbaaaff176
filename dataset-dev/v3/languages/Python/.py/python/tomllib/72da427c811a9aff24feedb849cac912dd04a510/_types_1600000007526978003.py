
from typing import Any, Callable, Tuple

ParseFloat = Callable[[str], Any]
Key = Tuple[str, ...]
Pos = int
