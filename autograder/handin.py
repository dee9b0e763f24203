"""What a student hands in: the submission zip (``autograder zip``), written reproducibly.

``write_zip`` is also how the instructor's distributions are written (``autograder.authoring.dist``); it lives here
because the student copy of the harness, which ships ``zip`` but none of the instructor tools, needs it too.
"""

from __future__ import annotations

import io
import stat
import zipfile
from pathlib import Path

from autograder import course

ZIP_TIME = (1980, 1, 1, 0, 0, 0)


class HandInError(Exception):
    """A submission that cannot be zipped from the folder given; the message says which files to add."""


def write_zip(files: dict[str, bytes], path: Path, executables: frozenset[str] = frozenset()) -> Path:
    """Write ``files`` as a reproducible zip: sorted, fixed timestamps, 0644 (0755 for the file names in
    ``executables``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            mode = 0o755 if Path(name).name in executables else 0o644
            info.external_attr = (stat.S_IFREG | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, files[name])
    temp = path.with_name(f".{path.name}.tmp")
    temp.write_bytes(buffer.getvalue())
    temp.replace(path)
    return path


def pack_submission(name: str, folder: Path, out: Path | None = None, extra: list[Path] = ()) -> Path:
    """Zip exactly the files a submission to ``name`` needs, from ``folder``, plus the ``extra`` files asked
    for (a predictions file), all at the zip's top level; returns the zip written.

    Raises ``HandInError`` naming every missing file (and, for a carried one, where to copy it from).
    """
    assignment = course.load(name)
    missing = [f for f in assignment.files if not (folder / f).is_file()] + [str(p) for p in extra if not p.is_file()]
    if missing:
        hints = [f"copy your {f} from the {assignment.carried[f]} assignment into {folder}"
                 for f in missing if f in assignment.carried]
        raise HandInError(f"{folder} has no {', '.join(missing)}; a {name} submission holds "
                          f"{', '.join(assignment.files)}" + "".join(f"; {hint}" for hint in hints))
    target = out or Path(f"{name}-submission.zip")
    files = {f: (folder / f).read_bytes() for f in assignment.files} | {p.name: p.read_bytes() for p in extra}
    return write_zip(files, target)
