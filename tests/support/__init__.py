"""What the harness's tests share beyond fixtures (``tests/conftest.py`` keeps only those and the hooks), imported as
``from support.x import ...`` (pytest puts ``tests/`` on the path: ``pythonpath`` in pyproject.toml): ``catalogue``
(the hostile catalogue's cases), ``lm`` (the LM reference, a tiny preset and world, the retraining run alone),
``classmates`` (a synthetic class), ``browser`` (Chromium for the report's pages), ``opened`` (what people open, read
as they read it) and ``not_linux`` (a system without Linux's layers, simulated)."""
