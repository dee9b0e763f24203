"""The wire format: values survive the round trip; hostile payloads become ProtocolError, never objects."""

import io
import os
import struct
import time

import numpy as np
import pytest
import torch

from autograder import protocol


def roundtrip(value):
    blobs: list[bytes] = []
    node = protocol.encode(value, blobs)
    return protocol.decode(node, blobs)


def test_roundtrip_of_nested_values():
    value = {"a": (torch.arange(6).reshape(2, 3), [1.5, None, "x"]), "b": np.float32(2.5), "c": torch.bool,
             "big": 2**70, "half": torch.ones(2, dtype=torch.bfloat16)}
    out = roundtrip(value)
    assert torch.equal(out["a"][0], value["a"][0]) and out["a"][1] == [1.5, None, "x"]
    assert isinstance(out["a"], tuple) and out["b"] == np.float32(2.5) and out["c"] is torch.bool
    assert out["big"] == 2**70 and out["half"].dtype == torch.bfloat16


def test_shapes_survive_including_no_dimensions_and_transposes():
    """A 0-dim tensor (a loss) arrives with no dimensions, not as shape (1,); a transposed one in its own shape."""
    for value in (torch.tensor(2.5), np.array(3), torch.arange(6.0).reshape(2, 3).T, torch.zeros(0, 4)):
        out = roundtrip(value)
        assert tuple(out.shape) == tuple(value.shape) and np.array_equal(np.asarray(out), np.asarray(value))


def test_tensor_metadata_survives_but_subclasses_become_plain():
    class Sneaky(torch.Tensor):
        def __eq__(self, other):
            return True

    out = roundtrip(torch.zeros(3).as_subclass(Sneaky).requires_grad_(True))
    assert type(out) is torch.Tensor and out.remote_meta["cls"] == "Sneaky" and out.remote_meta["requires_grad"]
    assert not torch.equal(out, torch.ones(3))


def test_pickled_arrays_are_refused():
    buffer = io.BytesIO()
    np.save(buffer, np.array([{"evil": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(protocol.ProtocolError):
        protocol.decode({"__ndarray__": 0}, [buffer.getvalue()])


@pytest.mark.parametrize("node", [
    {"__tensor__": 3}, {"__nope__": 1}, ["bare"], {"__list__": "notalist"}, {"__dtype__": "os.system"},
    {"__handle__": 1}, {"__meta__": [2, -1], "dtype": "float32"}, {"__meta__": [1] * 17, "dtype": "float32"},
    {"__meta__": [2], "dtype": "object"}, {"__meta__": [2.5], "dtype": "float32"}, {"__meta__": 3, "dtype": "bool"},
])
def test_malformed_trees_are_refused(node):
    with pytest.raises(protocol.ProtocolError):
        protocol.decode(node, [])


def test_depth_limit():
    node = None
    for _ in range(protocol.MAX_DEPTH + 5):
        node = {"__list__": [node]}
    with pytest.raises(protocol.ProtocolError):
        protocol.decode(node, [])


def test_frames_roundtrip_and_reject_oversized_or_garbage_headers():
    read, write = os.pipe()
    protocol.write_frame(write, {"op": "x"}, [b"abc"])
    header, blobs = protocol.read_frame(read, deadline=None)
    assert header["op"] == "x" and blobs == [b"abc"]
    os.write(write, struct.pack(">I", protocol.MAX_HEADER_BYTES + 1))
    with pytest.raises(protocol.ProtocolError):
        protocol.read_frame(read, deadline=None)
    os.write(write, struct.pack(">I", 5) + b"{oops")
    with pytest.raises(protocol.ProtocolError):
        protocol.read_frame(read, deadline=None)
    huge = b'{"blobs": [1099511627776]}'
    os.write(write, struct.pack(">I", len(huge)) + huge)
    with pytest.raises(protocol.ProtocolError):
        protocol.read_frame(read, deadline=None, max_bytes=1 << 20)
    os.close(write)
    with pytest.raises(protocol.PeerClosed):
        protocol.read_frame(read, deadline=None)


def test_a_reply_over_its_bound_is_refused_unread_and_one_within_it_is_read_once():
    """A reply is read into one buffer per blob (no chunks joined, no copy when its arrays are decoded); one announced
    over ``max_bytes`` is refused before a byte of it is read (a valid 1 GiB reply took the runner to 3.3 GB)."""
    read, write = os.pipe()
    announced = b'{"ok": true, "blobs": [1073741824]}'
    os.write(write, struct.pack(">I", len(announced)) + announced + b"\0" * 1000)
    with pytest.raises(protocol.TooLarge) as refused:
        protocol.read_frame(read, deadline=None, max_bytes=64 << 20)
    assert (refused.value.size, refused.value.limit) == (1 << 30, 64 << 20)
    assert len(os.read(read, 2000)) == 1000, "the refused reply was read"
    array = np.arange(3000, dtype=np.float32)  # within the pipe's buffer: this thread writes, then reads
    protocol.write_frame(write, {"ok": True}, [protocol.array_to_bytes(array)])
    _, (blob,) = protocol.read_frame(read, deadline=None, max_bytes=64 << 20)
    decoded = protocol.bytes_to_array(blob)
    assert isinstance(blob, bytearray) and np.array_equal(decoded, array)
    assert np.shares_memory(decoded, np.frombuffer(blob, np.uint8)), "the array was copied out of the reply"
    with pytest.raises(protocol.ProtocolError, match="does not hold"):
        protocol.bytes_to_array(blob[:-4])
    os.close(read)
    os.close(write)


def test_read_times_out():
    read, _write = os.pipe()
    with pytest.raises(protocol.ReadTimeout):
        protocol.read_frame(read, deadline=time.monotonic() + 0.1)


def test_foreign_byte_order_and_unreadable_values_are_protocol_errors():
    """Whatever a hostile worker sends, decoding raises ProtocolError and nothing else (a test then fails closed)."""
    buffer = io.BytesIO()
    np.save(buffer, np.arange(4, dtype=">f8"), allow_pickle=False)
    with pytest.raises(protocol.ProtocolError, match="byte order"):
        protocol.decode({"__tensor__": 0}, [buffer.getvalue()])
    with pytest.raises(protocol.ProtocolError):
        protocol.decode({"__bigint__": "not a number"}, [])
    with pytest.raises(protocol.ProtocolError):
        protocol.decode({"__handle__": 1}, [], lambda node: 1 / 0)
    blobs: list[bytes] = []
    node = protocol.encode(np.arange(3, dtype=">i4"), blobs)  # a sender's own foreign array is made native
    assert protocol.decode(node, blobs).tolist() == [0, 1, 2]


def test_a_tensor_goes_where_the_sender_names_only_when_asked():
    blobs: list[bytes] = []
    node = protocol.encode([torch.ones(2)], blobs, device="cuda")
    assert node["__list__"][0]["device"] == "cuda"
    assert protocol.decode(node, blobs)[0].device.type == "cpu"  # the grader's side never leaves the CPU


def test_a_meta_tensor_travels_as_its_shape_and_is_placed_on_meta_only_when_asked():
    out = roundtrip([torch.empty(2, 3, dtype=torch.float64, device="meta")])[0]
    assert out.is_meta and out.shape == (2, 3) and out.dtype == torch.float64
    blobs: list[bytes] = []
    node = protocol.encode([torch.ones(2)], blobs, device="meta")
    assert protocol.decode(node, blobs)[0].device.type == "cpu"
    assert protocol.decode(node, blobs, place=True)[0].is_meta


@pytest.mark.parametrize("watched", [True, False], ids=["watched", "control"])
def test_a_peer_that_exits_is_seen_although_its_child_holds_the_pipe(watched):
    """A worker killed (for memory, say) while a process it started holds its reply pipe: the reader watching its pidfd
    knows at once; without the watch it waits for the deadline."""
    read, write = os.pipe()
    peer = os.fork()
    if peer == 0:
        os.close(read)
        if os.fork() == 0:
            time.sleep(5)
        os._exit(0)
    os.close(write)
    watch = os.pidfd_open(peer)
    started = time.monotonic()
    try:
        with pytest.raises(protocol.PeerClosed if watched else protocol.ReadTimeout):
            protocol.read_frame(read, started + 2, watch=watch if watched else None)
    finally:
        os.waitpid(peer, 0)
        os.close(read)
        os.close(watch)
    if watched:
        assert time.monotonic() - started < 1
