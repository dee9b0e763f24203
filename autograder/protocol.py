"""The wire format between the trusted grader and the student worker.

A message is one frame: a 4-byte big-endian length, a UTF-8 JSON header of that length, then the
raw blobs the header lists (``"blobs": [size, ...]``). Arrays travel as ``.npy`` bytes and are
loaded with ``allow_pickle=False``: the parent never unpickles anything a submission produced.

Values are encoded as a JSON tree with tagged nodes (``{"__tensor__": i, ...}`` points at blob i). A tensor on
the ``meta`` device has no data: it travels as its shape and dtype alone (``{"__meta__": shape, ...}``), so that a
check can run a submission on a second device type where the grader has one device (the CPU).
Objects that cannot travel (an ``nn.Module``, a generator) stay in the worker and are sent as
``{"__handle__": id}``; the parent wraps them in a ``RemoteObject``. Decoding is depth-limited and
validates every tag, so a hostile worker can only produce an ``ProtocolError``, never a crash.
"""

from __future__ import annotations

import io
import json
import math
import os
import select
import struct
import time
from typing import Any

import numpy as np

MAX_DEPTH = 64
MAX_META_DIMS = 16  # a meta tensor holds no data; its shape is bounded all the same
MAX_HEADER_BYTES = 16 << 20
NPY_HEADER_BYTES = 1 << 16  # where an array payload's own header must end (``np.save`` writes a few hundred bytes)
# numpy dtypes that may cross the boundary; anything else (object, void, strings) is refused.
ALLOWED_DTYPES = {
    "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
    "complex64", "complex128",
}


class ProtocolError(Exception):
    """The other side sent something that is not a valid message."""


class TooLarge(ProtocolError):
    """The other side announced a message larger than the reader allows (``read_frame``'s ``max_bytes``); nothing of
    it was read."""

    def __init__(self, size: int, limit: int):
        super().__init__(f"message of {size} bytes exceeds the {limit} byte limit")
        self.size, self.limit = size, limit


class PeerClosed(ProtocolError):
    """The other side closed its end (it exited or was killed)."""


class ReadTimeout(Exception):
    """No complete message arrived before the deadline."""


# ---------------------------------------------------------------- framing


def write_frame(fd: int, header: dict, blobs: list[bytes] | tuple = ()) -> None:
    """Send one message: ``header`` (JSON-able) plus raw ``blobs``."""
    header = dict(header, blobs=[len(b) for b in blobs])
    body = json.dumps(header, allow_nan=True).encode()
    _write_all(fd, struct.pack(">I", len(body)) + body)
    for blob in blobs:
        _write_all(fd, blob)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def read_frame(fd: int, deadline: float | None = None, max_bytes: int = 1 << 31,
               watch: int | None = None) -> tuple[dict, list[bytes]]:
    """Read one message; raise ``ReadTimeout`` past ``deadline`` (a ``time.monotonic`` value).

    ``max_bytes`` caps the total size of the blobs the peer may announce (``TooLarge``), so a hostile worker cannot
    make the parent allocate without bound; each blob is read into a buffer of its announced size, allocated once, so
    the reader holds the message once (each blob a ``bytearray``). ``watch``: a pidfd of the peer; once it exits
    with nothing left to read, ``PeerClosed``, although a process it started may hold its end of the pipe open.
    """
    (size,) = struct.unpack(">I", _read_exact(fd, 4, deadline, watch))
    if size > MAX_HEADER_BYTES:
        raise ProtocolError(f"message header of {size} bytes is larger than the {MAX_HEADER_BYTES} limit")
    try:
        header = json.loads(_read_exact(fd, size, deadline, watch))
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(f"malformed message header: {exc}") from None
    if not isinstance(header, dict):
        raise ProtocolError("message header is not a JSON object")
    sizes = header.get("blobs", [])
    if not isinstance(sizes, list) or not all(isinstance(s, int) and s >= 0 for s in sizes):
        raise ProtocolError("message header has an invalid blob list")
    if sum(sizes) > max_bytes:
        raise TooLarge(sum(sizes), max_bytes)
    return header, [_read_exact(fd, s, deadline, watch) for s in sizes]


def _read_exact(fd: int, n: int, deadline: float | None, watch: int | None = None) -> bytearray:
    buffer, got = bytearray(n), 0
    view = memoryview(buffer)
    while got < n:
        if deadline is not None or watch is not None:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise ReadTimeout()
            ready, _, _ = select.select([fd] if watch is None else [fd, watch], [], [], remaining)
            if not ready:
                raise ReadTimeout()
            if fd not in ready:  # what it wrote before it exited is in the pipe already, and would be ready
                raise PeerClosed("the other side exited")
        read = os.readv(fd, [view[got:]])
        if not read:
            raise PeerClosed("the other side closed the connection")
        got += read
    return buffer


# ---------------------------------------------------------------- arrays


def array_to_bytes(array: np.ndarray) -> bytes:
    """``.npy`` bytes of a numeric or boolean array (shape and dtype preserved, in this machine's byte order)."""
    if array.dtype.name not in ALLOWED_DTYPES:
        raise ProtocolError(f"arrays of dtype {array.dtype} cannot be sent")
    buffer = io.BytesIO()
    # np.require, not np.ascontiguousarray: that one makes a 0-dim array (a loss, a scalar tensor) 1-dim
    np.save(buffer, np.require(array, dtype=array.dtype.newbyteorder("="), requirements="C"), allow_pickle=False)
    return buffer.getvalue()


def bytes_to_array(data: bytes | bytearray) -> np.ndarray:
    """Inverse of ``array_to_bytes``; refuses pickled, non-numeric or foreign-byte-order payloads, and payloads whose
    size is not what their header says. The array is a view of ``data``, not a copy (writable where ``data`` is a
    ``bytearray``, as ``read_frame`` gives)."""
    try:
        stream = io.BytesIO(memoryview(data)[:NPY_HEADER_BYTES])
        version = np.lib.format.read_magic(stream)
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
            np.lib.format.read_array_header_2_0
        shape, fortran, dtype = read_header(stream)
    except Exception as exc:  # noqa: BLE001 - any failure is a malformed payload
        raise ProtocolError(f"invalid array payload: {exc}") from None
    if dtype.name not in ALLOWED_DTYPES:
        raise ProtocolError("array payload has a forbidden dtype")
    if not dtype.isnative:
        raise ProtocolError(f"array payload is not in this machine's byte order ({dtype.str})")
    count = math.prod(shape)
    if len(data) - stream.tell() != count * dtype.itemsize:
        raise ProtocolError(f"array payload of {len(data)} bytes does not hold the {shape} array it announces")
    return np.ndarray(shape, dtype, buffer=data, offset=stream.tell(), order="F" if fortran else "C")


# ---------------------------------------------------------------- value trees


def encode(value: Any, blobs: list[bytes], make_handle=None, depth: int = 0, *, device: str | None = None) -> Any:
    """Encode ``value`` as a JSON tree, appending array payloads to ``blobs``.

    ``make_handle(obj) -> dict`` is called for objects that cannot travel; without it they are an error.
    ``device`` names where the receiving side should put the tensors (``decode(..., place=True)``); by default
    where they are.
    """
    import torch

    if depth > MAX_DEPTH:
        raise ProtocolError(f"value is nested more than {MAX_DEPTH} levels deep")
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value if abs(value) < 2**63 else {"__bigint__": str(value)}
    if isinstance(value, float):
        return value
    if isinstance(value, torch.Tensor):
        return _encode_tensor(value, blobs, device)
    if isinstance(value, np.ndarray | np.generic) and np.asarray(value).dtype.name in ALLOWED_DTYPES:
        blobs.append(array_to_bytes(np.asarray(value)))
        return {"__ndarray__": len(blobs) - 1, "scalar": isinstance(value, np.generic)}
    if isinstance(value, torch.dtype):
        return {"__dtype__": str(value).removeprefix("torch.")}
    if isinstance(value, torch.device):
        return {"__device__": str(value)}
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return {"__tuple__": [encode(v, blobs, make_handle, depth + 1, device=device) for v in value]}
    if isinstance(value, list | tuple):
        return {"__list__": [encode(v, blobs, make_handle, depth + 1, device=device) for v in value]}
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"__dict__": {k: encode(v, blobs, make_handle, depth + 1, device=device) for k, v in value.items()}}
    if make_handle is not None:
        return make_handle(value)
    raise ProtocolError(f"a {type(value).__name__} cannot be sent to the worker")


def _encode_tensor(tensor, blobs: list[bytes], device: str | None) -> dict:
    import torch

    meta = {
        "dtype": str(tensor.dtype).removeprefix("torch."),
        "device": device or str(tensor.device),
        "requires_grad": bool(tensor.requires_grad),
        "cls": type(tensor).__name__,
    }
    if tensor.is_meta:
        return {"__meta__": list(tensor.shape), **meta}
    # Plain data only: strip subclasses, autograd history and devices before serialising.
    data = torch.Tensor._make_subclass(torch.Tensor, tensor.detach()) if type(tensor) is not torch.Tensor else tensor
    data = data.detach().to("cpu")
    if data.is_sparse or data.layout != torch.strided:
        data = data.to_dense()
    if data.dtype == torch.bfloat16:
        data = data.float()
    blobs.append(array_to_bytes(data.resolve_conj().resolve_neg().numpy()))
    return {"__tensor__": len(blobs) - 1, **meta}


def decode(node: Any, blobs: list[bytes], resolve_handle=None, *, place: bool = False) -> Any:
    """Rebuild a value from ``encode``'s tree. ``resolve_handle(node) -> object`` maps handles; with ``place``,
    tensors go to the device the sender named (when it exists here), else they stay on the CPU.

    Whatever goes wrong is a ``ProtocolError``: a value the other side sent can never raise anything else here.
    """
    try:
        return _decode(node, blobs, resolve_handle, 0, place)
    except ProtocolError:
        raise
    except Exception as exc:  # noqa: BLE001 - a hostile tree may break any step
        raise ProtocolError(f"value cannot be read ({type(exc).__name__}: {exc})") from None


def _meta_tensor(node: dict):
    """A ``meta`` tensor of the shape and dtype ``node`` announces (it allocates nothing)."""
    import torch

    shape = _as_list(node["__meta__"])
    if len(shape) > MAX_META_DIMS or not all(type(n) is int and 0 <= n < 2**62 for n in shape):
        raise ProtocolError(f"invalid meta tensor shape {shape!r}"[:200])
    dtype = node.get("dtype")
    if dtype not in ALLOWED_DTYPES | {"bfloat16"}:
        raise ProtocolError(f"meta tensor of dtype {dtype!r} refused"[:200])
    return torch.empty(shape, dtype=getattr(torch, dtype), device="meta")


def _decode(node: Any, blobs: list[bytes], resolve_handle, depth: int, place: bool) -> Any:
    import torch

    if depth > MAX_DEPTH:
        raise ProtocolError("value is nested too deeply")
    if node is None or isinstance(node, bool | int | float | str):
        return node
    if isinstance(node, list):  # bare lists never appear in encoded trees
        raise ProtocolError("unexpected bare list in value tree")
    if not isinstance(node, dict) or len(node) == 0:
        raise ProtocolError("unexpected node in value tree")
    if "__tensor__" in node:
        array = bytes_to_array(_blob(blobs, node["__tensor__"]))
        tensor = torch.from_numpy(array.copy())
        dtype = node.get("dtype")
        if dtype == "bfloat16":
            tensor = tensor.to(torch.bfloat16)
        tensor.remote_meta = {k: node.get(k) for k in ("dtype", "device", "requires_grad", "cls")}
        device = node.get("device")
        if place and isinstance(device, str) and device.startswith("cuda") and torch.cuda.is_available():
            tensor = tensor.to(device)
        if place and device == "meta":
            tensor = tensor.to("meta")
        return tensor
    if "__meta__" in node:
        return _meta_tensor(node)
    if "__ndarray__" in node:
        array = bytes_to_array(_blob(blobs, node["__ndarray__"]))
        return array[()] if node.get("scalar") else array
    if "__tuple__" in node:
        return tuple(_decode(v, blobs, resolve_handle, depth + 1, place) for v in _as_list(node["__tuple__"]))
    if "__list__" in node:
        return [_decode(v, blobs, resolve_handle, depth + 1, place) for v in _as_list(node["__list__"])]
    if "__dict__" in node:
        items = node["__dict__"]
        if not isinstance(items, dict):
            raise ProtocolError("dict node without a mapping")
        return {str(k): _decode(v, blobs, resolve_handle, depth + 1, place) for k, v in items.items()}
    if "__dtype__" in node:
        dtype = getattr(torch, str(node["__dtype__"]), None)
        if not isinstance(dtype, torch.dtype):
            raise ProtocolError(f"unknown dtype {node['__dtype__']!r}")
        return dtype
    if "__device__" in node:
        return torch.device(str(node["__device__"]))
    if "__bigint__" in node:
        return int(str(node["__bigint__"]))
    if "__handle__" in node:
        if resolve_handle is None:
            raise ProtocolError("unexpected object handle")
        return resolve_handle(node)
    raise ProtocolError(f"unknown node tag {sorted(node)[:3]}")


def _blob(blobs: list[bytes], index: Any) -> bytes:
    if not isinstance(index, int) or not 0 <= index < len(blobs):
        raise ProtocolError(f"reference to missing payload {index!r}")
    return blobs[index]


def _as_list(items: Any) -> list:
    if not isinstance(items, list):
        raise ProtocolError("sequence node without a list")
    return items
