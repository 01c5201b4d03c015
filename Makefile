# `make run` and `make test` each create .venv with Python 3.12 when missing, install what the
# project needs (pyproject.toml), then run.
VENV    := .venv
PYTHON  := $(VENV)/bin/python
STAMP   := $(VENV)/.installed-stamp
PACKAGES := core tools ict debate podcast jobs bot adapters

.PHONY: run test lint typecheck imports pytest install clean

run: $(STAMP)
	$(VENV)/bin/bullpen serve

test: $(STAMP) lint typecheck imports pytest

install: $(STAMP)

$(PYTHON):
	@py=""; \
	for c in python3.12 $$HOME/.pyenv/versions/3.12*/bin/python3.12 \
	         /usr/local/bin/python3.12 /usr/bin/python3.12; do \
	  if $$c -c 'import sys; assert sys.version_info[:2] == (3, 12)' >/dev/null 2>&1; then \
	    py=$$c; break; fi; \
	done; \
	if [ -z "$$py" ]; then echo "Python 3.12 not found: install python3.12 first" >&2; exit 1; fi; \
	echo "creating $(VENV) with $$py"; \
	$$py -m venv $(VENV)

$(STAMP): pyproject.toml | $(PYTHON)
	$(PYTHON) -m pip install -q --upgrade pip
	$(PYTHON) -m pip install -q -e '.[dev]'
	@touch $(STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check .

typecheck: $(STAMP)
	$(VENV)/bin/mypy $(PACKAGES)

imports: $(STAMP)
	$(VENV)/bin/lint-imports

pytest: $(STAMP)
	$(PYTHON) -m pytest -q

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
