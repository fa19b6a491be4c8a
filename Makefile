# Every target sets up what it needs: a virtual environment in .venv with the
# package and its dev tools, and (for the browser targets) a Chromium.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.xmltools-installed
# the MCP servers the tests run that come from npm (server-everything, server-filesystem), installed
# from the committed lock into tests/support/npm/node_modules (ignored by git)
NPM_DIR := tests/support/npm
# Playwright MCP, which make bench sets xmltools against (bench/bench_lead.py), from its committed lock
LEAD_DIR := bench/npm

.PHONY: demo test test-fast stress bench lint docs browser clean

# Bytecode and pytest's rewritten test modules are cached in __pycache__ (ignored by git); a shell
# that turns bytecode writing off would make every run compile the package and the tests again.
unexport PYTHONDONTWRITEBYTECODE

demo: $(STAMP) browser
	$(BIN)/xmltools demo

# The whole suite over two processes, each with its own Chromium: the unit tests, the slow ones
# (subprocesses, the wheel in a fresh environment) and the browser tests in one run, work-stealing,
# so that a worker whose browser test waits on a page is not idle while the other has tests left.
# The tests that repeat an action run 3 times here (make stress: 30, serially). test-fast runs
# tests/unit alone. The 15 slowest tests are listed at the end, to see where the time goes.
test: $(STAMP) browser
	$(BIN)/python -m pytest -q -n 2 --dist worksteal --durations=15 tests/unit tests/slow tests/browser

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

$(STAMP): pyproject.toml setup.py $(NPM_DIR)/package-lock.json
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
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
	rm -rf $(VENV) build dist site *.egg-info .pytest_cache .mypy_cache .ruff_cache $(NPM_DIR)/node_modules $(LEAD_DIR)/node_modules
