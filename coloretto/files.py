"""Writing files safely: where an output cannot go, checked before the work that
fills it, and a file replaced whole or not at all. Used by the commands and the
terminal game (the core itself does no I/O)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def output_file_problem(file: Path) -> str | None:
    """Why ``file`` cannot be written (None when it can be): it is a folder, or its
    folder does not exist or is not a folder. Checked before the work, not after."""
    if file.is_dir():
        return f"{file} is a directory, not a file"
    folder = file.parent
    if not folder.exists():
        return f"the directory {folder} does not exist"
    if not folder.is_dir():
        return f"{folder} is not a directory"
    return None


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all: a temporary file in the same
    directory, flushed to disk, then renamed over ``path`` (raises OSError)."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, path.stat().st_mode & 0o777 if path.exists() else 0o644)  # mkstemp's is 0o600
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
