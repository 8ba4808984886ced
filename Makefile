# The two commands of the README. Each creates or refreshes the project's virtual
# environment (.venv) first: torch is installed on its own, before everything else, so
# that no dependency pulls a CUDA build onto a CPU machine.
#
#   make main     the book (params/cpu.yaml): base model, sets, runs, every chapter executed,
#                 Jupyter Book HTML; prints the path of the built index.html last
#   make test     the test suite (installs Debian's chromium for the browser test if absent)
#
# Variables: PARAMS=params/smoke.yaml, TORCH="torch==2.13.0" (e.g. a CUDA build on a GPU box).

PYTHON ?= $(shell command -v python3.11 || command -v python3)
TORCH ?= torch==2.13.0
PARAMS ?= params/cpu.yaml
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: main test venv browser

venv: $(STAMP)

$(STAMP): pyproject.toml Makefile
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install --quiet "$(TORCH)"
	$(VENV)/bin/python -m pip install --quiet -e ".[book,dev]"
	touch $(STAMP)

main: $(STAMP)
	$(VENV)/bin/isobook book --params $(PARAMS)

# The book's browser test reads the built pages in Debian's Chromium (installed if absent).
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
		apt-get install -y -qq chromium >/dev/null 2>&1 || \
		(apt-get update -qq && apt-get install -y -qq chromium >/dev/null) || \
		(echo "make test: needs Debian's chromium for the book's browser test (apt-get install chromium)" && false)

test: $(STAMP) browser
	$(VENV)/bin/python -m pytest -q
