"""Grading many submissions (``autograder grade``): finding them (``discovery``), grading each in a runner process of
its own (``jobs``, ``runners``; the runners' warm start is ``zygote``), one engine interface (``engine``) with a local
pool (``local``) and a Ray cluster (``ray``), each returning results and writing only each submission's folder, a
batch resumed from an earlier results folder (``resume``), the batch's gradebooks and summary (``gradebook``), and
the one owner of a results folder, which decides what a grading may do to it and writes its files once, the report
with a writer the command passes in (``folder``).

It may import ``grading``, ``gradescope_metadata``, ``sandbox`` and the shared modules; ``gradescope`` (the driver),
``report``, ``authoring`` and the command line sit above it.
"""
