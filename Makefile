# serialkit — `make demo` runs the main job offline on bundled data; `make test` sets up and tests.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin
OUT ?= out/demo
# Debian packages the tests use: MuseScore 3 (exported files open in notation software),
# Chromium (review page), FluidSynth + GM soundfont (panel audio), rsvg-convert (PNG/PDF), a C
# compiler for the compiled chain search (`make native`; the tests check it is the one running).
SYSTEM_PKGS := musescore3 chromium fluidsynth fluid-soundfont-gm librsvg2-bin lilypond gcc

.PHONY: all venv native system-deps test lint typecheck docs demo bench clean

all: test

$(VENV)/.installed: pyproject.toml plugins/serialkit-example-proposer/pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test,dev,docs]'
	$(BIN)/pip install -q -e plugins/serialkit-example-proposer
	touch $@

venv: $(VENV)/.installed

# the chain search compiled with mypyc (serialkit/core/native.py); without a C compiler the
# analysis runs as written, slower, and `make native` says so
native: venv
	$(PY) scripts/build_native.py || echo "warning: no compiled chain search; the analysis runs as written (slower)"

system-deps:
	@missing=""; for p in $(SYSTEM_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing Debian packages:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing </dev/null; \
	  else echo "warning: missing Debian packages:$$missing (tests that need them will skip)"; fi; \
	fi

lint: venv
	$(BIN)/ruff check serialkit tests bench scripts

typecheck: venv
	$(BIN)/mypy serialkit

test: venv system-deps native lint typecheck docs
	$(BIN)/pytest -q -n 2 --dist loadgroup

# the docs site (mkdocs-material + mkdocstrings) into out/site; any warning fails it
docs: venv
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

demo: venv native
	@mkdir -p $(OUT)
	$(BIN)/serialkit row show webern-op21
	$(BIN)/serialkit check fixtures/pieces/demo-piece.json --report $(OUT)/demo-check.json || [ $$? -eq 1 ]  # exit 1: planted mistakes
	$(BIN)/serialkit annotate fixtures/pieces/demo-piece.json -o $(OUT)/demo-annotated.musicxml --report $(OUT)/demo-annotate.json || [ $$? -eq 1 ]  # exit 1: planted wrong notes stay unexplained (red)
	$(BIN)/serialkit render fixtures/render/duet.musicxml --check-report fixtures/render/duet.check.json --certificate fixtures/render/duet.certificate.json -o $(OUT)/duet-review.html
	$(BIN)/serialkit generate trio-schoenberg -o $(OUT)/generate --force --seed 3 -O profile=paper-raw  # harness: model-like mistakes repaired, released
	$(BIN)/serialkit render $(OUT)/generate -o $(OUT)/generate/score.png
	$(BIN)/serialkit generate trio-schoenberg -o $(OUT)/generate-raw --force --seed 3 -O profile=paper-raw --variant raw || [ $$? -eq 1 ]  # raw baseline, same proposer and seed: abstains
	@echo "generated run (score.musicxml, score.png, review.html, certificate.json, report.json, transcript.jsonl) is in $(OUT)/generate/"
	@echo "demo outputs are in $(OUT)/"

bench: venv native
	@for b in bench/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) out .pytest_cache .mypy_cache .ruff_cache
	rm -f serialkit/core/analysis/_*_native*.so serialkit/core/analysis/_*_native.stamp.json serialkit/core/analysis/_*_native.failed
