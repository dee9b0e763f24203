"""Turning what a student handed in (a folder or a zip) into a private folder the worker can use.

Zips are checked before anything is extracted: no absolute paths, no ``..`` entries, no links,
at most ``MAX_FILES`` entries, ``MAX_DEPTH`` levels of folders and ``MAX_BYTES`` uncompressed, and no entry that
expands more than ``MAX_RATIO`` times (a zip bomb: what it declares is all ``zipfile`` will write). A zip inside the zip
is a file like any other, never opened; and before ``zipfile`` reads a zip's directory whole, its end record says how
many entries and bytes the directory holds (``open_zip``), so a zip of millions of empty entries is refused unread.
Folders (Gradescope unzips a student's zip itself) are read breadth first
with the same limits, counted as they are read (``trees.walk``), so a chain of thousands of folders or a folder of a
million entries costs no more than the limit. A code file or notebook larger than ``notebook_cells.MAX_BYTES`` is
refused before anything parses it. Folders are copied without
following symbolic links (a link to ``/etc/shadow`` or to the solutions must not be copied by a root
grader), except in the repository's own ``solutions/`` and ``assignments/`` trees: there a link to
another assignment's file (``solutions/positions/masking.py -> ../masking/masking.py``) is how one
assignment reuses another's module without a second copy.
The submission's root is the shallowest folder holding every required file, so a zip of a
folder and a zip of the files both work. A required file *carried* from an earlier assignment (the
student's own ``masking.py``, handed in again with positions) that is missing gets a message naming
that assignment. Every failure is a ``SubmissionError`` whose message
tells the student what to hand in instead.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shutil
import stat
import struct
import sys
import zipfile
from pathlib import Path, PurePosixPath

from autograder import notebook_cells, scratch, trees

MAX_FILES = 2000  # entries: files and folders
MAX_BYTES = 512 << 20
MAX_DEPTH = 20  # levels of folders
MAX_RATIO = 100  # how many times its compressed size an entry may expand to (beyond RATIO_FREE bytes)
RATIO_FREE = 1 << 20
JUNK = {"__MACOSX", ".DS_Store", "__pycache__", ".ipynb_checkpoints", ".git"}
MAX_DIRECTORY = 16 << 20  # bytes of a zip's central directory (MAX_FILES entries take well under 1 MB)
EXPORT_FILES = 100 * MAX_FILES  # a Gradescope export zip holds a class: entries, and expanded bytes
EXPORT_BYTES = 8 * MAX_BYTES
DIRECTORY_ENTRY = 512  # bytes of central directory per entry allowed, past MAX_DIRECTORY (an export's: 100 MB)


class SubmissionError(Exception):
    """The submission cannot be graded as handed in; the message says why and what to do."""


def stage(source: Path, required: list[str], workdir: Path, carried: dict[str, str] | None = None) -> Path:
    """Copy or extract ``source`` under ``workdir`` and return ``workdir/submission``, the folder that held
    ``required`` (with everything beside them), after ``refuse_shadowing``.

    ``carried`` maps the required files that come from an earlier assignment to its name.
    """
    source = Path(source)
    unpacked = workdir / "unpacked"
    root = _unpack(source, unpacked, required, carried)
    refuse_shadowing(root, required)
    refuse_large_code(root, required)
    staged = workdir / "submission"
    os.rename(root, staged)
    trees.remove(unpacked)
    return staged


def digest(root: Path) -> str:
    """A staged submission's content, as ``sha256:HEX`` over every regular file under ``root`` (its path relative to
    ``root``, its size, its bytes; in path order): the same files give the same digest, whatever the submission was
    called or handed in as (a zip or a folder). ``grade --resume`` matches results to submissions by it."""
    hasher = hashlib.sha256()
    files = sorted((Path(entry.path).relative_to(root).as_posix(), entry.path) for _, entry in trees.walk(root)
                   if entry.is_file(follow_symlinks=False))
    for relative, path in files:
        hasher.update(f"{relative}\0{os.path.getsize(path)}\0".encode())
        with open(path, "rb") as handle:  # hashlib.file_digest is Python 3.11+: students' check runs on 3.10 too
            inner = hashlib.sha256()
            for block in iter(lambda: handle.read(1 << 20), b""):
                inner.update(block)
        hasher.update(inner.digest())
    return f"sha256:{hasher.hexdigest()}"


def pack(source: Path) -> tuple[str, bytes]:
    """``(name, data)``: a submission as bytes, for a grader that does not share this machine's files
    (``autograder.batch.ray``); ``unpack`` there gives ``stage`` what it would have read here.

    A file (a zip, or anything else, which ``stage`` refuses there as here) travels as it is; a folder as a zip of
    what ``stage`` would copy from it (links followed only in the repository's own trees), named with a final ``/``.
    """
    source = Path(source)
    if not source.is_dir():
        if source.stat().st_size > MAX_BYTES:
            raise SubmissionError(f"{source.name} is larger than {MAX_BYTES >> 20} MB; hand in only your files")
        return source.name, source.read_bytes()
    buffer = io.BytesIO()
    with scratch.folder("pack") as temp, \
            zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        _copy_folder(source, temp, follow_links=_trusted(source))
        for path in sorted(temp.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(temp).as_posix())
    return "submission/", buffer.getvalue()


def unpack(name: str, data: bytes, folder: Path) -> Path:
    """Write what ``pack`` made into the new folder ``folder``; return the submission's path there (a folder is
    extracted back, with the checks every zip gets)."""
    folder.mkdir(parents=True)
    path = folder / (Path(name).name or "submission")
    if not name.endswith("/"):
        path.write_bytes(data)
        return path
    packed = folder / "packed.zip"
    packed.write_bytes(data)
    extract_zip(packed, path)
    packed.unlink()
    return path


def refuse_shadowing(root: Path, required: list[str]) -> None:
    """Refuse a file that the worker's interpreter would import in place of a library or run at start-up.

    The submission's folder is first on the worker's import path (after the grader's traps are set), so a
    ``torch.py``, a ``numpy/`` package, a ``sitecustomize.py``, ``usercustomize.py`` or a ``.pth`` file would hide or
    hook what the grader relies on; none of them is ever part of an assignment.
    """
    taken = _importable_names() - {Path(name).stem for name in required}
    for entry in sorted(root.iterdir()):
        name, stem = entry.name, entry.name.split(".", 1)[0]
        module = entry.is_dir() or entry.suffix in (".py", ".pyc", ".so", ".pyd")
        if entry.suffix == ".pth" or stem in ("sitecustomize", "usercustomize"):
            why = "a file Python runs at start-up"
        elif module and stem in taken:
            why = f"it has the name of the Python library {stem}, which it would replace"
        else:
            continue
        raise SubmissionError(f"the submission holds {name} ({why}): rename it or leave it out; hand in only "
                              f"{', '.join(required)} and your data files")


def refuse_large_code(root: Path, required: list[str]) -> None:
    """Refuse a code file or notebook too large to parse: the grader reads each one whole (a notebook's JSON, a
    file's syntax tree), several times, so 90 MB of notebook took the runner past 2 GB."""
    for name in required:
        size = (root / name).stat().st_size
        if name.endswith((".py", ".ipynb")) and size > notebook_cells.MAX_BYTES:
            raise SubmissionError(f"{name} is {size / (1 << 20):.0f} MB, more than the "
                                  f"{notebook_cells.MAX_BYTES >> 20} MB a code file or notebook may be: clear a "
                                  "notebook's outputs (in Jupyter, \"Clear All Outputs\"), save it, and keep data in "
                                  "files of its own")


def _importable_names() -> set[str]:
    """Top-level modules the worker's interpreter can import: the standard library's and every installed one's."""
    import sysconfig

    names = set(sys.stdlib_module_names) | set(sys.builtin_module_names)
    for folder in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}:
        with contextlib.suppress(OSError):
            for entry in os.scandir(folder):
                stem = entry.name.split(".", 1)[0].split("-", 1)[0]
                if entry.name.endswith((".dist-info", ".egg-info", ".pth")) or not stem.isidentifier():
                    continue
                names.add(stem)
    return names


def _unpack(source: Path, unpacked: Path, required: list[str], carried: dict[str, str] | None) -> Path:
    if source.is_dir():
        try:
            _copy_folder(source, unpacked, follow_links=_trusted(source))
        except OSError as exc:
            raise SubmissionError(f"the submission's files cannot be read ({exc.strerror}: "
                                  f"{Path(exc.filename or '').name!r}); hand in only your files, in a folder "
                                  "with short names") from None
    elif source.is_file() and source.suffix.lower() == ".zip":
        extract_zip(source, unpacked)
    elif source.is_file() and source.name in required:
        unpacked.mkdir(parents=True)
        shutil.copy2(source, unpacked / source.name)
    elif not source.exists():
        raise SubmissionError(f"{source} does not exist")
    else:
        raise SubmissionError(f"{source.name} is neither a folder nor a .zip; hand in a folder (or a zip of it) "
                              f"holding {', '.join(required)}")
    return find_root(unpacked, required, carried)


def find_root(folder: Path, required: list[str], carried: dict[str, str] | None = None) -> Path:
    """The shallowest folder under ``folder`` that holds every file in ``required``.

    ``carried`` maps required files that come from an earlier assignment to its name (for the message).
    """
    carried = carried or {}
    candidates = sorted((p for p in [folder, *folder.rglob("*")] if p.is_dir() and not (JUNK & set(p.parts))),
                        key=lambda p: len(p.parts))
    for candidate in candidates:
        if all((candidate / name).is_file() for name in required):
            return candidate
    files = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and not JUNK & set(p.parts))
    if not files:
        raise SubmissionError(f"the submission is empty; hand in {', '.join(required)}")
    missing = [name for name in required if not any(Path(f).name == name for f in files)]
    hints = []
    for name in missing:
        near = [f for f in files if Path(f).name not in required and Path(f).suffix.lower() == Path(name).suffix
                and Path(f).name.lower().replace(" ", "").startswith(Path(name).stem.lower())]
        if near:
            hints.append(f"found {near[0]!r}: rename it to {name!r}")
        elif name in carried:
            hints.append(f"{name} is your file from the {carried[name]} assignment, which this one builds on: "
                         f"copy it into the folder you hand in")
    shown = ", ".join(files[:10]) + (" ..." if len(files) > 10 else "")
    message = f"the submission has no {', '.join(missing) or 'folder holding all of ' + ', '.join(required)}"
    if hints:
        message += f" ({'; '.join(hints)})"
    raise SubmissionError(f"{message}. It contains: {shown}")


def _trusted(source: Path) -> bool:
    """Whether ``source`` is one of the repository's own reference or skeleton folders."""
    from autograder.course import REPO_ROOT

    resolved = source.resolve()
    return any(resolved.is_relative_to(REPO_ROOT / tree) for tree in ("solutions", "assignments"))


def _copy_folder(source: Path, target: Path, follow_links: bool = False) -> None:
    target.mkdir(parents=True, exist_ok=True)
    total = 0
    for count, (depth, entry) in enumerate(trees.walk(source, skip=JUNK), start=1):
        _check_shape(count, depth)
        copy = target / Path(entry.path).relative_to(source)
        if entry.is_dir(follow_symlinks=False):
            if entry.name not in JUNK:
                copy.mkdir()
            continue
        info = entry.stat(follow_symlinks=follow_links)
        if entry.name in JUNK or not stat.S_ISREG(info.st_mode):
            continue  # links, devices and sockets are not submissions
        total += info.st_size
        if total > MAX_BYTES:
            raise SubmissionError(f"the submission is larger than {MAX_BYTES >> 20} MB; hand in only the files the "
                                  "assignment asks for")
        shutil.copyfile(entry.path, copy)


def _check_shape(count: int, depth: int) -> None:
    """Refuse the ``count``-th entry of a submission, ``depth`` folders down, past the limits."""
    if count > MAX_FILES:
        raise SubmissionError(f"the submission holds more than {MAX_FILES} files and folders; hand in only the files "
                              "the assignment asks for")
    if depth > MAX_DEPTH:
        raise SubmissionError(f"the submission has more than {MAX_DEPTH} levels of folders; hand in your files in "
                              "one folder")


def open_zip(path: Path, max_files: int = MAX_FILES) -> zipfile.ZipFile:
    """``path`` opened as a zip once its end record (the zip64 one where there is one) declares at most ``max_files``
    entries in a directory of at most ``MAX_DIRECTORY`` bytes (``DIRECTORY_ENTRY`` per entry allowed, for more than
    ``MAX_FILES``): ``zipfile`` reads the whole directory as it opens. Raises ``SubmissionError`` beyond that,
    ``zipfile.BadZipFile`` without an end record. ``max_files``: a submission's ``MAX_FILES``, or a class's in a
    Gradescope export (``EXPORT_FILES``)."""
    with open(path, "rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        start = max(0, size - (22 + 0xFFFF))  # the end record, then a comment of at most 64 KB
        handle.seek(start)
        tail = handle.read()
        at = tail.rfind(b"PK\x05\x06")
        if at < 0 or len(tail) - at < 22:
            raise zipfile.BadZipFile("File is not a zip file")
        entries, directory = struct.unpack("<HI", tail[at + 10:at + 16])
        if (entries == 0xFFFF or directory == 0xFFFFFFFF) and at >= 20 and tail[at - 20:at - 16] == b"PK\x06\x07":
            handle.seek(struct.unpack("<Q", tail[at - 12:at - 4])[0])  # the zip64 end record
            record = handle.read(56)
            if len(record) == 56 and record[:4] == b"PK\x06\x06":
                entries, directory = struct.unpack("<QQ", record[32:48])
    if entries > max_files or directory > max(MAX_DIRECTORY, max_files * DIRECTORY_ENTRY):
        raise SubmissionError(f"the zip holds {entries} entries (limit {max_files}) in a directory of {directory} "
                              "bytes; zip only your files")
    return zipfile.ZipFile(path)


def extract_zip(source: Path, target: Path, max_files: int = MAX_FILES, max_bytes: int = MAX_BYTES) -> None:
    """Extract ``source`` into the new folder ``target`` within the limits (the module docstring), junk left out;
    ``SubmissionError`` says why not. ``max_files`` and ``max_bytes``: a submission's, or an export's (a class)."""
    try:
        with open_zip(source, max_files) as archive:
            members = archive.infolist()
            _check_members(members, max_files, max_bytes)
            bad = archive.testzip()
            if bad is not None:
                raise SubmissionError(f"the zip is corrupted (entry {bad!r} fails its checksum); create it again")
            target.mkdir(parents=True)
            for member in members:
                parts = PurePosixPath(member.filename.replace("\\", "/")).parts
                if JUNK & set(parts):
                    continue
                destination = target.joinpath(*parts)
                if member.is_dir():
                    destination.mkdir(parents=True, exist_ok=True)
                    continue
                destination.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(member) as stream, open(destination, "wb") as out:
                    shutil.copyfileobj(stream, out)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, NotImplementedError, ValueError) as exc:
        raise SubmissionError(unreadable_zip(source, exc)) from None


def unreadable_zip(source: Path, exc: Exception) -> str:
    """What to tell the student about a zip that ``exc`` says cannot be read (staging it, or detecting what it is)."""
    return (f"{source.name} is not a readable zip file ({type(exc).__name__}: {exc}); create it again, for example "
            "with `zip -r submission.zip FOLDER`")


def _check_members(members: list[zipfile.ZipInfo], max_files: int = MAX_FILES, max_bytes: int = MAX_BYTES) -> None:
    if len(members) > max_files:
        raise SubmissionError(f"the zip holds {len(members)} entries (limit {max_files}); zip only your files")
    if sum(m.file_size for m in members) > max_bytes:
        raise SubmissionError(f"the zip expands to more than {max_bytes >> 20} MB; zip only your files")
    for member in members:
        name = member.filename.replace("\\", "/")
        parts = PurePosixPath(name).parts
        _check_shape(1, len(parts))
        if member.file_size > max(RATIO_FREE, MAX_RATIO * member.compress_size):
            raise SubmissionError(f"the zip's entry {member.filename!r} expands {member.file_size / (1 << 20):.0f} MB "
                                  f"from {member.compress_size} bytes, more than {MAX_RATIO} times over: zip only "
                                  "your own files, as they are")
        if name.startswith("/") or ".." in parts or (parts and parts[0].endswith(":")):
            raise SubmissionError(f"the zip has an unsafe entry {member.filename!r} (an absolute path or '..'); "
                                  "create the zip from inside your folder")
        if stat.S_ISLNK(member.external_attr >> 16):
            raise SubmissionError(f"the zip contains a symbolic link {member.filename!r}; zip the files themselves")


METADATA = ("submission_metadata.json", "submission_metadata.yml")  # Gradescope's names for who made a submission
METADATA_DEPTH = 3  # how deep in a submission a file with one of those names is looked for


def metadata_files(root: Path) -> list[str]:
    """Which of Gradescope's metadata names (``METADATA``) the staged submission ``root`` holds, to ``METADATA_DEPTH``
    folders down: who made a submission comes from the grader's side only (``autograder.gradescope_metadata.students``),
    so these files are ignored, and the student is told (by these fixed names: a folder's name is the student's)."""
    found = set()
    for dirpath, dirnames, filenames in os.walk(root):
        depth = len(Path(dirpath).relative_to(root).parts)
        dirnames[:] = [] if depth + 1 >= METADATA_DEPTH else dirnames
        found.update(name for name in filenames if name in METADATA)
    return sorted(found)
