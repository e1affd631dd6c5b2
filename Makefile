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
# in requirements-isaaclab.txt, kept outside the clone (about 8 GB; 11-20 minutes to build on
# a fresh machine) under a name holding the lock's hash, so a changed lock builds a new one
# (older ones are removed once it is built). ISAACLAB_STAGE=0 skips the stage, saying so.
# pyenv's 3.12 first (its python3.12 shim fails unless 3.12 is the selected version)
PYTHON312 ?= $(or $(wildcard $(shell pyenv prefix 3.12 2>/dev/null)/bin/python3.12),\
                  $(shell command -v python3.12 2>/dev/null))
ISAACLAB_LOCK := requirements-isaaclab.txt
ISAACLAB_HOME ?= $(HOME)/.cache/sim2real
ISAACLAB_NAME := isaaclab-venv-$(shell sha256sum $(ISAACLAB_LOCK) | cut -c1-12)
ISAACLAB_VENV := $(ISAACLAB_HOME)/$(ISAACLAB_NAME)
ISAACLAB_STAMP := $(ISAACLAB_VENV)/.installed
ISAACLAB_STAGE ?= 1
export WARP_CACHE_PATH ?= $(HOME)/.cache/warp

.PHONY: all demo test lint docs bench clean distclean osmesa isaaclab-venv isaaclab-stage

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
	$(SIM2REAL) train quadrotor-hover --run-dir $(DEMO_DIR) --seed 0 --overwrite
	$(SIM2REAL) export $(DEMO_DIR)
	$(SIM2REAL) eval $(DEMO_DIR)/policy.onnx --episodes 256 --json
	$(SIM2REAL) hil quadrotor --policy $(DEMO_DIR)/policy.onnx --faults all --json \
	    --log-dir $(DEMO_DIR)/hil

test: $(STAMP)
	$(PY) -m flake8
	@site="$$(mktemp -d)" && $(MAKE) --no-print-directory docs DOCS_SITE="$$site" \
	    DOCS_ARGS=--quiet && rm -rf -- "$$site"
	$(PY) -m pytest -q --durations=30 $(PYTEST_ARGS)
	@$(MAKE) --no-print-directory isaaclab-stage

isaaclab-venv: $(ISAACLAB_STAMP)

# keyed by the lock's hash (the path), not its timestamp; a failed build leaves no stamp
$(ISAACLAB_STAMP):
	@test -x "$(PYTHON312)" || { echo "no Python 3.12 (python3.12 or pyenv's 3.12): the" \
	    "Isaac Lab stage needs one (ISAACLAB_STAGE=0 skips it)" >&2; exit 1; }
	rm -rf -- "$(ISAACLAB_VENV)"
	"$(PYTHON312)" -m venv "$(ISAACLAB_VENV)"
	"$(ISAACLAB_VENV)/bin/python" -m pip install -q --no-deps -r $(ISAACLAB_LOCK)
	touch "$@"
	find "$(ISAACLAB_HOME)" -mindepth 1 -maxdepth 1 -name 'isaaclab-venv-*' \
	    ! -name '$(ISAACLAB_NAME)' -exec rm -rf -- {} +

# our task built, stepped, trained 2 iterations and imported in Isaac Lab (tests/isaaclab);
# this checkout goes into the venv (--no-deps: its MuJoCo 3 stays; from a clean build/, so
# no deleted module survives) before each run
ifeq ($(ISAACLAB_STAGE),0)
isaaclab-stage:
	@echo 'Isaac Lab stage SKIPPED (ISAACLAB_STAGE=0)'
else
isaaclab-stage: $(STAMP) $(ISAACLAB_STAMP)
	rm -rf build
	"$(ISAACLAB_VENV)/bin/python" -m pip install -q --no-deps --no-build-isolation \
	    --force-reinstall .
	SIM2REAL_ISAACLAB_PYTHON="$(ISAACLAB_VENV)/bin/python" $(PY) -m pytest -q tests/isaaclab
endif

lint: $(STAMP)
	$(PY) -m flake8

# The documentation site (mkdocs.yml, docs/; seconds): strict, so a broken link or anchor or a
# page missing from the nav fails. DOCS_SITE moves the output (default site/). The CLI
# reference and the results pages are generated from the parser and the policy cards.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 DISABLE_MKDOCS_2_WARNING=true \
	    $(PY) -m mkdocs build --strict $(DOCS_ARGS) --site-dir $(or $(DOCS_SITE),site)

bench: $(STAMP)
	$(PY) -m bench.run $(BENCH_ARGS)

clean:
	rm -rf build dist .eggs *.egg-info .pytest_cache .hypothesis
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
