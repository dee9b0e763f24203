# Two entry points, both self-contained on a fresh machine: `make demo` and `make test`.
# Everything runs from a local virtual environment (.venv), created on first use and
# rebuilt when pyproject.toml changes.

# Student code runs as unprivileged users, who must be able to run the venv's interpreter where namespaces are not
# available (as root in Docker): prefer the system's python3.11 to one under a private home (pyenv's, in /root).
PYTHON ?= $(shell /usr/bin/python3.11 -c "import ensurepip, venv" 2>/dev/null && echo /usr/bin/python3.11 || echo python3.11)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
JOBS ?= 2

.PHONY: demo test chromium seccomp lint build validate clean

# pip would compile what it installs on one core; compileall does it on every core (docs/performance.md, What `make test` runs).
# The bytecode matters: PYTHONDONTWRITEBYTECODE=1 machines never cache what is compiled later. Files written
# for a newer Python (torch's py312 test helpers) do not compile: pip skips them quietly, and so do we.
$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found; install Python 3.11 or run make PYTHON=/path/to/python3.11"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --no-compile -e ".[dev,cluster]"
	$(BIN)/python -m compileall -q -j 0 $(VENV)/lib >/dev/null || true
	@touch $(STAMP)

# The demo skips the lm retraining test (minutes per submission on a CPU); `make demo RETRAIN=1` runs it.
demo: seccomp $(STAMP)
	$(BIN)/autograder grade examples --out results/demo --jobs $(JOBS) $(if $(RETRAIN),,--skip-tag retraining)

# The class report's test drives Debian's Chromium: when we are root and it is missing, its install starts first, in
# the background (scripts/chromium.sh: long on a fresh machine; it goes on beside building .venv and validating), and
# the tests wait for it; without it tests/report/test_report.py skips its browser test, with a message.
# The tests run $(JOBS) at a time, a test file per process, their threads waiting as gradings' (batch/runners.py OPENMP)
# do, files marked slow first (tests/conftest.py; xdist would order files by their number of tests). Those marked
# `alone` count a uid pool's processes and files: they run beside the others in a process of their own, with a pool
# no other grading leases from (AUTOGRADER_UIDS), their output shown once both are done.
ALONE_UIDS := 61512-62023
test: chromium seccomp $(STAMP) lint
	$(BIN)/autograder build --check
	$(BIN)/autograder validate --jobs $(JOBS) --fresh-secrets 1 --no-retrain-alternatives
	scripts/chromium.sh wait
	@mkdir -p build
	export OMP_WAIT_POLICY=PASSIVE GOMP_SPINCOUNT=1000; \
	AUTOGRADER_UIDS=$(ALONE_UIDS) $(BIN)/python -m pytest tests -m alone --durations=5 >build/test-alone.log 2>&1 & \
	$(BIN)/python -m pytest tests -m "not alone" -n $(JOBS) --dist loadfile --no-loadscope-reorder --durations=15; \
	others=$$?; wait $$!; alone=$$?; echo "--- the tests marked alone (build/test-alone.log):"; \
	cat build/test-alone.log; exit $$((others || alone))

chromium:
	scripts/chromium.sh start

# The workers' system-call filter (docs/security.md) runs on the system's libseccomp, part of most systems: installed as
# root where it is missing; otherwise workers grade without the filter, which their results' isolation note says.
seccomp:
	@/sbin/ldconfig -p 2>/dev/null | grep -q 'libseccomp\.so\.2' \
	  || { [ "$$(id -u)" = 0 ] && apt-get install -y -q libseccomp2 >/dev/null; } \
	  || echo "warning: libseccomp2 is missing and cannot be installed without root: workers grade without the system-call filter (docs/security.md)"

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache

build: $(STAMP)
	$(BIN)/autograder build

validate: $(STAMP)
	$(BIN)/autograder validate --jobs $(JOBS)

clean:
	rm -rf $(VENV) results
