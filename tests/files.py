"""File helpers shared by tests."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path


def make_read_only(path: Path):
    """Make a file unwritable, even for root where chattr works; return the undo function, or None if impossible."""
    if os.geteuid() != 0:
        path.chmod(0o444)
        return lambda: path.chmod(0o644)
    if shutil.which("chattr") and subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode == 0:
        return lambda: subprocess.run(["chattr", "-i", str(path)], check=True)
    return None
