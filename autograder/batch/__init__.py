"""Grading many submissions (``autograder grade``): finding them (``discovery``), grading each in a runner process of
its own (``jobs``, ``runners``; the runners' warm start is ``zygote``), one engine interface (``engine``) with a local
pool (``local``) and a Ray cluster (``ray``), a batch resumed from an earlier results folder (``resume``), and the
batch's gradebook and summary (``gradebook``).

It may import ``grading``, ``sandbox`` and the shared modules; ``gradescope``, ``report``, ``authoring`` and the
command line sit above it.
"""
