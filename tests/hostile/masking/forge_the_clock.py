"""A slow implementation that stops every clock it can reach in its process (time.perf_counter, monotonic, time,
process_time, os.times) and adds a made-up GPU peak of 0 bytes to every reply it sends."""
RUNTIME = True
CLASS = "4 trusting the worker"
BASE = "mutant:attention_python_loops"
EXPECT = "base"
CODE = r'''
import os as _os
import sys as _sys
import time as _time

for _name in ("perf_counter", "monotonic", "time", "process_time", "perf_counter_ns", "monotonic_ns"):
    setattr(_time, _name, (lambda: 0) if _name.endswith("_ns") else (lambda: 0.0))
_os.times = lambda: _os.times_result((0.0, 0.0, 0.0, 0.0, 0.0))
_protocol = _sys.modules.get("autograder.protocol")
if _protocol is not None:
    _write = _protocol.write_frame

    def _forged(fd, header, blobs=()):
        if isinstance(header, dict):
            header = dict(header, cuda_peak_bytes=0, seconds=0.0)
        return _write(fd, header, blobs)

    _protocol.write_frame = _forged
'''
