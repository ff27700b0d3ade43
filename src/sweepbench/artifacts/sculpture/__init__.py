"""3D sculptures (spec artifacts.md §3): the model returns a parts list under a system prompt,
the product clamps it, expands v2 definitions, and writes a byte-deterministic .glb."""

from sweepbench.artifacts.sculpture.kind import SCULPTURE, build, from_data, from_file, lenient
from sweepbench.artifacts.sculpture.manifest import dumps, loads, stamp

__all__ = ["SCULPTURE", "build", "dumps", "from_data", "from_file", "lenient", "loads", "stamp"]
