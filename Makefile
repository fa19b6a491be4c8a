# Every target sets up what it needs: a virtual environment in .venv with the
# package and its dev tools, and (for the browser targets) a Chromium.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.xmltools-installed
# the development environment's versions, pinned (tests/lockdiff.py; make lock writes it anew)
LOCK   := constraints.txt
# the newest releases of every dependency, for make test-latest and make lock
LATEST := .venv-latest
# the MCP servers the tests run that come from npm (server-everything, server-filesystem), installed
# from the committed lock into tests/support/npm/node_modules (ignored by git)
NPM_DIR := tests/support/npm
# Playwright MCP, which make bench sets xmltools against (bench/bench_lead.py), from its committed lock
LEAD_DIR := bench/npm

.PHONY: demo test test-long test-fast test-latest coverage lock stress bench lint docs browser clean

# Bytecode and pytest's rewritten test modules are cached in __pycache__ (ignored by git); a shell
# that turns bytecode writing off would make every run compile the package and the tests again.
unexport PYTHONDONTWRITEBYTECODE

demo: $(STAMP) browser
	$(BIN)/xmltools demo

# The tests each feature needs, within 6 minutes on a 2-core machine: the unit tests, the slow ones
# (subprocesses, the wheel's contents) and the browser tests, over two processes, each with its own
# Chromium, work-stealing, so that a worker whose browser test waits on a page is not idle while
# the other has tests left.  The long scenarios (marked `long`: whole experiments, the pytest plugin
# in a pytest run, the wheel in a fresh environment, a real site) are make test-long's.  The tests
# that repeat an action run 3 times here (make stress: 30, serially).  The 15 slowest tests are
# listed at the end, to see where the time goes.  COVERAGE=1 measures the line coverage of xmltools
# too (into coverage/), which make coverage reports.
PYTEST := $(BIN)/python -m pytest -q -n 2 --dist worksteal --durations=15
TIERS  := tests/unit tests/slow tests/browser
COV     = $(if $(COVERAGE),--cov=xmltools --cov-report= --cov-config=pyproject.toml,)

test: $(STAMP) browser
	rm -rf coverage/test.data*; mkdir -p coverage
	COVERAGE_FILE=$(CURDIR)/coverage/test.data $(PYTEST) $(COV) -m "not long" $(TIERS)

# The long scenarios make test leaves out: the lab's experiments, the pytest plugin, the quiet exit,
# the real site, every documented example from the wheel in a fresh environment.
test-long: $(STAMP) browser
	rm -rf coverage/long.data*; mkdir -p coverage
	COVERAGE_FILE=$(CURDIR)/coverage/long.data $(PYTEST) $(COV) -m long $(TIERS)

# The line coverage of xmltools by make test, beside the whole suite's (make test and make test-long
# together), from their COVERAGE=1 runs; make test's must stay within 3 points of the whole's.
coverage: $(STAMP)
	$(BIN)/python tests/coverage_tiers.py coverage/test.data coverage/long.data

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 tests/unit

# The tests that repeat an action against pages served with random delays (marked `repeated`, by
# the `repeat` fixture), 30 times each instead of make test's 3: the races they catch show up one
# time in ten or less.
stress: $(STAMP) browser
	XMLTOOLS_REPEAT=30 $(BIN)/python -m pytest -q -m repeated tests/browser

# The commit the user-path bench measures in the same run as this tree, in turns with it (the
# figures of docs/performance.md are set against it): make bench BENCH_BEFORE=REV for another.
BENCH_BEFORE ?= d05e5b4

bench: $(STAMP) browser
	mkdir -p bench/results
	$(BIN)/python bench/bench_parser.py --json bench/results/parser.json
	$(BIN)/python bench/bench_browser.py --json bench/results/browser.json
	$(BIN)/python bench/bench_pool.py --json bench/results/pool.json
	$(BIN)/python bench/bench_compare.py --json bench/results/compare.json
	$(BIN)/python bench/bench_experiment.py --json bench/results/experiment.json
	$(BIN)/python bench/bench_user_path.py --before $(BENCH_BEFORE) --json bench/results/user_path.json
	cd $(LEAD_DIR) && npm ci --no-audit --no-fund --loglevel=error
	$(BIN)/python bench/bench_lead.py --json bench/results/lead.json

# The unit tests against the newest release of every dependency, in an environment of their own
# ($(LATEST)), after a line for each package that moved since the lock: what a user who installs
# today gets, whatever the lock says.  CI runs it and prints its result; it does not fail CI.
test-latest:
	rm -rf $(LATEST)
	$(PYTHON) -m venv $(LATEST)
	$(LATEST)/bin/python -m pip install -q --upgrade pip
	$(LATEST)/bin/python -m pip install -q -e '.[dev]'
	$(LATEST)/bin/python tests/lockdiff.py $(LATEST)
	$(LATEST)/bin/python -m pytest -q -n 2 -p no:cacheprovider tests/unit

# The lock written anew from the newest releases (then make test, and commit constraints.txt).
lock:
	rm -rf $(LATEST)
	$(PYTHON) -m venv $(LATEST)
	$(LATEST)/bin/python -m pip install -q --upgrade pip
	$(LATEST)/bin/python -m pip install -q -e '.[dev]'
	$(LATEST)/bin/python tests/lockdiff.py $(LATEST) --write

lint: $(STAMP)
	$(BIN)/ruff check xmltools tests bench
	$(BIN)/ruff format --check xmltools tests bench
	$(BIN)/mypy --strict xmltools

# The documentation site, from docs/ and mkdocs.yml, into site/. --strict turns every warning (a
# broken link or anchor, a page left out of the nav, a name mkdocstrings cannot find) into a
# failure. NO_MKDOCS_2_WARNING quiets the theme's notice about its own future, which is no
# warning about these pages.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

# The virtual environment, installed from the lock: a fresh machine gets what was tested.
$(STAMP): pyproject.toml setup.py $(LOCK) $(NPM_DIR)/package-lock.json
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q -c $(LOCK) --upgrade pip
	$(BIN)/python -m pip install -q -c $(LOCK) -e '.[dev]'
	cd $(NPM_DIR) && npm ci --no-audit --no-fund --loglevel=error
	touch $(STAMP)

# Find a Chromium; install Debian's package when there is none and we may.
browser: $(STAMP)
	@if $(BIN)/python -m xmltools.browser.locate >/dev/null 2>&1; then \
		echo "browser: $$($(BIN)/python -m xmltools.browser.locate)"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
		&& grep -qiE '^(ID|ID_LIKE)=.*(debian|ubuntu)' /etc/os-release; then \
		echo "browser: none found; installing Debian's chromium package"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null \
		&& echo "browser: $$($(BIN)/python -m xmltools.browser.locate)"; \
	else \
		$(BIN)/python -m xmltools.browser.locate; exit 1; \
	fi

clean:
	rm -rf $(VENV) $(LATEST) coverage build dist site *.egg-info .pytest_cache .mypy_cache .ruff_cache $(NPM_DIR)/node_modules $(LEAD_DIR)/node_modules
