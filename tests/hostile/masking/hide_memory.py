"""A correct attention that wastes 300 MB in every forward pass and frees it before returning, and tells the grader
through its replies that its peak was 0 bytes."""
RUNTIME = True
CLASS = "4 trusting the worker"
BASE = "reference"
EXPECT = "below"
CODE = r'''
import sys as _sys

_Attention = CausalSelfAttention


class CausalSelfAttention(_Attention):
    def forward(self, x, lengths=None):
        waste = torch.ones(75_000_000)
        waste += 1
        del waste
        return super().forward(x, lengths)


_protocol = _sys.modules.get("autograder.protocol")
if _protocol is not None:
    _write = _protocol.write_frame

    def _forged(fd, header, blobs=()):
        if isinstance(header, dict):
            header = dict(header, cuda_peak_bytes=0, peak_bytes=0)
        return _write(fd, header, blobs)

    _protocol.write_frame = _forged
'''
