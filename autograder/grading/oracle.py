"""Expected values for graded tests: computed live from the reference, or replayed from a recording.

A test asks ``oracle(fn)`` where ``fn(impl)`` computes something from an implementation
(``impl.masking.causal_mask(5)``); ``fn`` must be deterministic (seed inside it). The answer is
an ``Expected``: the reference's value plus, computed only when a comparison fails, the value
of every known mutant, so feedback can name the mistake. Each call runs with torch's global generator
seeded (and restored afterwards): a mutant may draw random numbers the test does not control (dropout
left on, sampling instead of argmax), and its recorded fingerprint must still be the same on every build.

Students have no reference. For the public tests, ``autograder build`` records every oracle
answer (reference and mutant values) into ``public/expected.zip`` (JSON plus ``.npy``, no pickle);
``autograder check`` replays it. A recorded value is keyed by what was asked, never by position: the test, where
``fn`` is written (file name, line, the names and constants it uses) and what it closes over (scalars exactly,
integer tensors by value, float tensors by dtype and shape, since their last bits vary between CPUs), and only
among identical questions by their order. So a student's function that raises before its check asks the oracle
cannot shift the values every later check of the test is compared with. Hidden tests always run live, and so does
a public test whose recording is stale: live grading replays the recording only when its fingerprint (of the
sources its values come from, ``Assignment.recording_fingerprint``) is the current one, which saves
recomputing the reference's and every mutant's values for every submission.

The gradings of one batch share the values of the checks they run live, the reference's and the known mistakes'
(``shared``, a folder of the batch's that no student process can reach): a hidden check asks every submission the
same question, and computing every mistake's answer for each one that fails it is most of a failing submission's
hidden grading, while the reference's answers are the same for every one. Those values are keyed by everything the
check asks to the last bit (``exact_question``: a machine's own floats, not a portable key), the assignment and the
term's secret; a check that closes over something that cannot be read exactly is not shared. The module globals a
check reads are keyed by name only: they must be the suite's own (constants, helpers, draws from the secret), never
something a grading changes, such as a student's output kept at module level (pass it in, as a closure or a
default).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import time
import types
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy
import torch

from autograder import protocol, scratch

Variants = list[tuple[str, Any]]
VERSION = 3  # of the recording's keys and layout: a recording of another version is never replayed
PROBES = "probes"  # the test under which the naming experiments' values are keyed (``Oracle.probe``)


class Expected:
    """The reference's ``value`` and the known mistakes' values (``variants()``)."""

    def __init__(self, value: Any, variants: Callable[[], Variants] | Variants = ()):
        self.value = value
        self._variants = variants

    def variants(self) -> Variants:
        if callable(self._variants):
            self._variants = self._variants()
        return list(self._variants)

    def map(self, fn: Callable[[Any], Any]) -> Expected:
        """The expectation of ``fn`` of the output (a cast, a reshape): the reference's and every mistake's value
        mapped (a mistake's value that ``fn`` cannot take is left out)."""
        def mapped() -> Variants:
            out = []
            for description, value in self.variants():
                try:
                    out.append((description, fn(value)))
                except (TypeError, ValueError, AttributeError, RuntimeError):
                    continue
            return out

        return Expected(fn(self.value), mapped)

    def __getitem__(self, index) -> Expected:
        """The expectation for one element of a tuple output (``expected[1]`` for the weights)."""
        def project() -> Variants:
            out = []
            for description, value in self.variants():
                try:
                    out.append((description, value[index]))
                except (TypeError, IndexError, KeyError):
                    continue
            return out

        return Expected(self.value[index], project)


class Oracle:
    """Answers ``oracle(fn)`` in one of three modes: ``live``, ``record`` or ``replay``."""

    def __init__(self, mode: str, reference=None, mutants=(), store: Path | None = None, fingerprint: str = "",
                 shared: Path | None = None, salt: str = ""):
        """``store``: the recording to replay (``replay``; in ``live`` mode too, where its fingerprint is
        ``fingerprint``) or to write (``record``, stamped with ``fingerprint``). ``shared``: the batch's folder of
        values (see the module docstring), under keys salted with ``salt`` (the assignment and the term's secret)."""
        if mode not in ("live", "record", "replay"):
            raise ValueError(f"unknown oracle mode {mode!r}")
        self.mode, self.reference, self.mutants, self.store = mode, reference, list(mutants), store
        self.fingerprint, self.shared, self.salt = fingerprint, shared, salt
        self.recorded: dict[str, tuple[Any, Variants]] = {}  # what this run records
        self._entries, self._blobs = {}, []  # what it replays, decoded when asked for
        readable = store is not None and store.is_file()
        if mode == "replay" and readable or mode == "live" and readable and store_fingerprint(store) == fingerprint:
            self._entries, self._blobs = load_store(store)
        self._test, self._asked = "", {}
        self._probes: dict[str, Expected] = {}  # the naming experiments asked so far (``probe``)
        self.seconds = 0.0  # spent computing expected values (the reference's, and mutants' for feedback)
        self.on_spent: Callable[[float], None] | None = None  # told each such span: the grader's time, not the test's

    def start_test(self, test_id: str) -> None:
        self._test, self._asked = test_id, {}

    def __call__(self, fn: Callable[[Any], Any]) -> Expected:
        question = question_of(fn)
        self._asked[question] = self._asked.get(question, 0) + 1
        key = f"{self._test}#{question}#{self._asked[question]}"
        if key in self._entries:
            entry, blobs = self._entries[key], self._blobs
            return Expected(protocol.decode(entry["value"], blobs),  # the mistakes' values only once a check fails
                            lambda: [(d, protocol.decode(v, blobs)) for d, v in entry["variants"]])
        if self.mode == "replay":
            raise AssertionError("the expected values for this check are missing from the assignment's "
                                 "public/expected.zip: ask the course staff to rebuild the assignment")
        if self.mode == "record":
            started = time.monotonic()
            value = _seeded(fn, self.reference)
            self._spent(started)
            variants = self._run_mutants(fn)
            self.recorded[key] = (value, variants)
            return Expected(value, variants)
        test = self._test
        started = time.monotonic()
        value = self._shared(fn, test, "value", lambda: _seeded(fn, self.reference))
        self._spent(started)
        return Expected(value, lambda: self._shared(fn, test, "variants", lambda: self._run_mutants(fn))
                        if self.mutants else [])

    def _shared(self, fn, test: str, part: str, compute: Callable[[], Any]) -> Any:
        """``compute()``, the reference's value for ``fn`` (``part`` "value") or the mistakes' ("variants"): read
        from the batch's shared folder, or computed and left there."""
        digest = exact_question(fn) if self.shared is not None else None
        if digest is None:
            return compute()
        name = hashlib.sha256(json.dumps([VERSION, test, self.salt, digest, part]).encode()).hexdigest()
        path = self.shared / f"{name}.zip"
        slot = 0 if part == "value" else 1  # a stored entry is a (value, variants) pair
        if path.is_file():
            with contextlib.suppress(OSError, KeyError, ValueError, zipfile.BadZipFile, protocol.ProtocolError):
                return read_store(path)[part][slot]
        result = compute()
        with contextlib.suppress(OSError, TypeError, ValueError, protocol.ProtocolError):  # a value it cannot carry
            with scratch.replacing(path) as partial:  # whole or absent, for the batch's other gradings
                write_store(partial, {part: (result, []) if part == "value" else (None, result)})
        return result

    def _run_mutants(self, fn) -> Variants:
        started = time.monotonic()
        out = []
        for mutant in self.mutants:
            try:
                out.append((mutant.description, _seeded(_on_copies(fn), mutant.implementation)))
            except Exception:  # noqa: BLE001 - a mutant that cannot run this check matches nothing
                continue
        self._spent(started)
        return out

    def _spent(self, started: float) -> None:
        seconds = time.monotonic() - started
        self.seconds += seconds
        if self.on_spent is not None:
            self.on_spent(seconds)

    def probe(self, fn: Callable[[Any], Any], name: str) -> Expected:
        """``self(fn)`` for the experiment ``name`` that confirms a mistake's name (``autograder.grading.naming``):
        keyed by its name under no test and asked once, so every test that asks it gets the same values."""
        if name not in self._probes:
            test, asked = self._test, self._asked
            self._test, self._asked = f"{PROBES}/{name}", {}
            try:
                self._probes[name] = self(fn)
            finally:
                self._test, self._asked = test, asked
        return self._probes[name]

    def save(self) -> None:
        if self.mode == "record" and self.store is not None:
            write_store(self.store, self.recorded, self.fingerprint)


def question_of(fn: Callable[[Any], Any]) -> str:
    """A short digest of what ``fn`` asks (see the module docstring); the same on every CPU and Python version."""
    text = json.dumps(_describe(fn, 4), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def exact_question(fn: Callable[[Any], Any]) -> str | None:
    """A digest of everything ``fn`` asks, floats to the last bit (so for this machine only, unlike ``question_of``);
    None when it closes over something that cannot be read exactly (a proxy to a student's process, an object)."""
    try:
        text = json.dumps(_describe(fn, 8, exact=True), sort_keys=True)
    except (_Inexact, TypeError):
        return None
    return hashlib.sha256(text.encode()).hexdigest()


class _Inexact(Exception):
    """A value ``_describe(..., exact=True)`` cannot describe to the last bit."""


def _describe(value: Any, depth: int, exact: bool = False) -> Any:
    """A JSON-able description of ``value`` for ``question_of`` (``depth`` bounds nested functions and containers);
    ``exact``: for ``exact_question``, floats and every tensor's content to the last bit, raising ``_Inexact`` for
    anything else."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value.hex() if exact else f"{value:.9g}"
    if depth == 0:
        if exact:
            raise _Inexact(type(value).__qualname__)
        return type(value).__qualname__
    if isinstance(value, torch.Tensor):
        if exact:
            return ["tensor", str(value.dtype), list(value.shape), _content(value)]
        small = not (value.is_floating_point() or value.is_complex()) and value.numel() <= 64
        return ["tensor", str(value.dtype), list(value.shape), value.tolist() if small else None]
    if isinstance(value, functools.partial):
        return ["partial", _describe(value.func, depth - 1, exact), _describe(value.args, depth - 1, exact),
                _describe(value.keywords, depth - 1, exact)]
    if isinstance(value, types.MethodType):
        if exact:  # what the method reads of its object is not known
            raise _Inexact(type(value.__self__).__qualname__)
        return ["method", _describe(value.__func__, depth - 1), type(value.__self__).__qualname__]
    if isinstance(value, types.FunctionType):
        cells = [cell.cell_contents for cell in value.__closure__ or () if _filled(cell)]
        return ["function", _code(value.__code__, exact), _describe(value.__defaults__ or (), depth - 1, exact),
                _describe(value.__kwdefaults__ or {}, depth - 1, exact), _describe(cells, depth - 1, exact)]
    if isinstance(value, list | tuple):
        return [_describe(item, depth - 1, exact) for item in value]
    if isinstance(value, dict):
        return {str(key): _describe(item, depth - 1, exact) for key, item in value.items()}
    if isinstance(value, types.ModuleType):
        return value.__name__
    if isinstance(value, numpy.ndarray):
        if exact:
            return ["ndarray", _content(torch.from_numpy(numpy.ascontiguousarray(value)))]
        return ["ndarray", str(value.dtype), list(value.shape)]
    if exact and dataclasses.is_dataclass(value) and not isinstance(value, type):  # a shape, a config: its fields
        return [type(value).__qualname__, _describe(vars(value), depth - 1, exact)]
    if exact:
        raise _Inexact(type(value).__qualname__)
    return type(value).__qualname__  # never asked anything: it may be a proxy to a student's process


def _content(tensor: torch.Tensor) -> str:
    """A digest of a dense tensor's elements, byte for byte (``_Inexact`` for a sparse or quantized one)."""
    if tensor.layout != torch.strided or tensor.is_quantized:
        raise _Inexact(str(tensor.layout))
    data = tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
    return hashlib.sha256(data).hexdigest()


def _code(code: types.CodeType, exact: bool = False) -> list:
    """Where a function is written and what it uses (no bytecode: it differs between Python versions)."""
    constants = [_code(c, exact) if isinstance(c, types.CodeType) else _describe(c, 1, exact) for c in code.co_consts]
    return [Path(code.co_filename).name, code.co_firstlineno, code.co_name, list(code.co_names), constants]


def _filled(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


def _on_copies(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``fn`` closing over copies of the tensors it closes over (in cells and defaults, and in the lists, tuples and
    dicts there): a mistake that changes an argument in place (a known mutant: ``q /= sqrt(d)``) must leave the test's
    inputs as they were for its later checks."""
    if not isinstance(fn, types.FunctionType):
        return fn
    try:
        cells = tuple(types.CellType(_copied(cell.cell_contents)) for cell in fn.__closure__ or ())
    except ValueError:  # a cell not filled yet
        return fn
    copied = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, _copied(fn.__defaults__), cells or None)
    copied.__kwdefaults__ = _copied(fn.__kwdefaults__)
    return copied


def _copied(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.clone()
    if type(value) in (list, tuple):
        return type(value)(_copied(item) for item in value)
    if type(value) is dict:
        return {key: _copied(item) for key, item in value.items()}
    return value


def _seeded(fn: Callable[[Any], Any], implementation) -> Any:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return fn(implementation)


def write_store(path: Path, entries: dict[str, tuple[Any, Variants]], fingerprint: str = "") -> None:
    """Write recorded values as a zip of ``manifest.json`` and ``blobs.bin``, byte-for-byte reproducible.

    The known mistakes' descriptions are written once (``descriptions``; a variant names its mistake by index) and the
    ``.npy`` blobs one after another in one member (their lengths in ``blob_sizes``): a suite whose naming experiments
    ask every mistake dozens of questions repeated each description at each, and a zip member per small blob costs
    more in headers than the blob holds."""
    blobs: list[bytes] = []
    descriptions: dict[str, int] = {}
    manifest = {"version": VERSION, "fingerprint": fingerprint, "entries": {}}
    for key in sorted(entries):
        value, variants = entries[key]
        manifest["entries"][key] = {
            "value": protocol.encode(value, blobs),
            "variants": [[descriptions.setdefault(d, len(descriptions)), protocol.encode(v, blobs)]
                         for d, v in variants],
        }
    manifest, blobs = _shared_blobs(manifest, blobs)
    manifest.update(descriptions=list(descriptions), blob_sizes=[len(blob) for blob in blobs])
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in [("manifest.json", json.dumps(manifest, separators=(",", ":")).encode()),
                           ("blobs.bin", b"".join(blobs))]:
            archive.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data, zipfile.ZIP_DEFLATED)


def _shared_blobs(manifest: dict, blobs: list[bytes]) -> tuple[dict, list[bytes]]:
    """Store equal blobs once: most mutants leave most outputs unchanged, so their recorded values repeat the
    reference's byte for byte (this keeps a suite with many mutants' recordings small)."""
    unique: dict[bytes, int] = {}
    index = [unique.setdefault(blob, len(unique)) for blob in blobs]

    def remap(node):
        if isinstance(node, dict):
            return {k: index[v] if k in ("__tensor__", "__ndarray__") else remap(v) for k, v in node.items()}
        if isinstance(node, list):
            return [remap(v) for v in node]
        return node

    return remap(manifest), list(unique)


def store_fingerprint(path: Path) -> str:
    """The fingerprint a recording was stamped with ("" when none, or when its keys are of another version)."""
    manifest = _read_store(*_stamp(path))[0]
    return str(manifest.get("fingerprint", "")) if manifest.get("version") == VERSION else ""


def load_store(path: Path) -> tuple[dict[str, dict], list[bytes]]:
    """A recording's undecoded entries (by key) and the blobs they point into (shared by every caller: read only)."""
    manifest, blobs = _read_store(*_stamp(path))
    return manifest["entries"], blobs


def preload(paths: list[Path]) -> None:
    """Read the recordings at ``paths`` into this process's cache: the runners' zygote does, so that no grading reads
    and decodes its assignment's again (tens of milliseconds each). They are public: students get them."""
    for path in paths:
        if path.is_file():
            _read_store(*_stamp(path))


def _stamp(path: Path) -> tuple[str, int, int, int]:
    """What identifies a recording's content for the cache: its path, inode, modification time and size."""
    info = os.stat(path)
    return str(path), info.st_ino, info.st_mtime_ns, info.st_size


@functools.lru_cache(maxsize=8)
def _read_store(path: str, inode: int, modified: int, size: int) -> tuple[dict, list[bytes]]:
    """A recording's manifest, its variants naming their mistakes' descriptions again, and its blobs, read once per
    process and content (``_stamp``). A recording of another version has no entries: it is never replayed."""
    with zipfile.ZipFile(path) as archive:
        manifest = json.loads(archive.read("manifest.json"))
        if manifest.get("version") != VERSION:
            return {**manifest, "entries": {}}, []
        stream, blobs, start = archive.read("blobs.bin"), [], 0
    for length in manifest["blob_sizes"]:
        blobs.append(stream[start:start + length])
        start += length
    descriptions = manifest["descriptions"]
    for entry in manifest["entries"].values():
        entry["variants"] = [[descriptions[index], value] for index, value in entry["variants"]]
    return manifest, blobs


def read_store(path: Path) -> dict[str, tuple[Any, Variants]]:
    entries, blobs = load_store(path)
    return {
        key: (protocol.decode(entry["value"], blobs),
              [(d, protocol.decode(v, blobs)) for d, v in entry["variants"]])
        for key, entry in entries.items()
    }
