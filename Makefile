# sim2real developer entry points (GNU make). `make demo` and `make test` build the venv first.
SHELL := /bin/bash

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
# the CPU build of torch that lies on local disk; an unpinned torch pulls a multi-GB CUDA build
TORCH_VERSION ?= 2.13.0
STAMP := $(VENV)/.installed
SIM2REAL := $(PY) -m sim2real.cli.main
DEMO_DIR ?= runs/demo
PYTEST_ARGS ?=

# The Isaac Lab stage (issue 20): a Python 3.12 venv with Isaac Lab 3.0, every package pinned
# in requirements-isaaclab.txt, kept outside the clone (about 8 GB, 20 minutes to build here)
# under a name holding the lock's hash, so a changed lock builds a new one (older ones go).
PYTHON312 ?= $(shell pyenv prefix 3.12.1 2>/dev/null || echo /usr)/bin/python3.12
ISAACLAB_LOCK := requirements-isaaclab.txt
ISAACLAB_HOME ?= $(HOME)/.cache/sim2real
ISAACLAB_VENV ?= $(ISAACLAB_HOME)/isaaclab-venv-$(shell sha256sum $(ISAACLAB_LOCK) | cut -c1-12)
ISAACLAB_STAMP := $(ISAACLAB_VENV)/.installed
export WARP_CACHE_PATH ?= $(HOME)/.cache/warp

.PHONY: all demo test lint bench clean distclean osmesa isaaclab-venv isaaclab-stage

all: test

# The stamp is rebuilt when the packaging changes; delete it (or the venv) to force a reinstall.
$(STAMP): setup.py setup.cfg Makefile
	@$(MAKE) --no-print-directory osmesa
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip setuptools wheel
	$(PIP) install -q torch==$(TORCH_VERSION)
	$(PIP) install -q -e '.[train,deploy,ros,dev,gpu,ray]'
	touch $@

# Offscreen MuJoCo rendering (MUJOCO_GL=osmesa) needs Debian's libosmesa6. Installed only if
# missing, and only as root with apt-get; otherwise a warning (rendering is optional).
osmesa:
	@if { ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null; } \
	      | grep -q 'libOSMesa\.so'; then \
	  :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo 'installing libosmesa6 (offscreen MuJoCo rendering)'; \
	  { apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libosmesa6 >/dev/null; } \
	  || echo 'warning: apt-get could not install libosmesa6;' \
	          'MUJOCO_GL=osmesa rendering will be unavailable' >&2; \
	else \
	  echo 'warning: libOSMesa not found and not root with apt-get;' \
	       'install libosmesa6 for MUJOCO_GL=osmesa rendering' >&2; \
	fi

demo: $(STAMP)
	$(SIM2REAL) train quadrotor-hover --run-dir $(DEMO_DIR) --seed 0
	$(SIM2REAL) export $(DEMO_DIR)
	$(SIM2REAL) eval $(DEMO_DIR)/policy.onnx --episodes 256 --json
	$(SIM2REAL) hil quadrotor --policy $(DEMO_DIR)/policy.onnx --faults all --json \
	    --log-dir $(DEMO_DIR)/hil

test: $(STAMP)
	$(PY) -m flake8
	$(PY) -m pytest -q $(PYTEST_ARGS)
	@$(MAKE) --no-print-directory isaaclab-stage

isaaclab-venv: $(ISAACLAB_STAMP)

$(ISAACLAB_STAMP): $(ISAACLAB_LOCK)
	rm -rf $(ISAACLAB_HOME)/isaaclab-venv-*
	$(PYTHON312) -m venv $(ISAACLAB_VENV)
	$(ISAACLAB_VENV)/bin/python -m pip install -q --no-deps -r $(ISAACLAB_LOCK)
	touch $@

# our task built, stepped, trained 2 iterations and imported in Isaac Lab (tests/isaaclab);
# this checkout goes into the venv (--no-deps: its MuJoCo 3 stays) before each run
isaaclab-stage: $(STAMP) $(ISAACLAB_STAMP)
	$(ISAACLAB_VENV)/bin/python -m pip install -q --no-deps --no-build-isolation \
	    --force-reinstall .
	SIM2REAL_ISAACLAB_PYTHON=$(ISAACLAB_VENV)/bin/python $(PY) -m pytest -q -m isaaclab \
	    tests/isaaclab

lint: $(STAMP)
	$(PY) -m flake8

bench: $(STAMP)
	$(PY) -m bench.run $(BENCH_ARGS)

clean:
	rm -rf build dist .eggs *.egg-info .pytest_cache .hypothesis
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
