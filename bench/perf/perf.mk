# bench/perf: the performance harness.  `make bench` builds and runs vs_bench; `make bench-compare` adds PyTorch and numpy in the
# same run and prints one Markdown table (bench/compare.md).  BENCH_FLAGS passes flags to vs_bench,
# e.g. make bench BENCH_FLAGS="--threads 1 --filter sgemm_nn".  bench-compare also measures the
# peak memory of the RSS_WORKLOAD loop, each side in a process of its own (bench/rss.jsonl).
EXTRA_PROGRAMS += bench/vs_bench
# The workloads also run inside the versus program (`versus bench perf`, bench/perf/cli.c).
VS_BENCH_PERF_SOURCES = bench/perf/perf.h bench/perf/main.c bench/perf/peak.c bench/perf/sgemm.c bench/perf/conv.c bench/perf/train.c \
	bench/perf/sweep.c
bench_vs_bench_SOURCES = bench/perf/vs_bench.c $(VS_BENCH_PERF_SOURCES)
versus_SOURCES += $(VS_BENCH_PERF_SOURCES) bench/perf/cli.c
bench_vs_bench_LDADD = libversus.la -lm
CLEANFILES += bench/vs_bench bench/versus.jsonl bench/reference.jsonl bench/compare.md bench/rss.jsonl bench/process.jsonl bench/onnx.jsonl
EXTRA_DIST += bench/perf/torch_reference.py bench/torch_models.py bench/perf/compare.py bench/perf/train_process.py bench/perf/torch_train_process.py \
	bench/perf/onnx_compare.py

# The Python that has torch and numpy (Debian's); numpy's OpenBLAS must not inherit tuning
# variables meant for other programs, so they are unset for that command only.
BENCH_PY3 = /usr/bin/python3
BENCH_FLAGS =
RSS_WORKLOAD = ganmex_mnist_step

bench: bench/vs_bench$(EXEEXT)
	./bench/vs_bench$(EXEEXT) $(BENCH_FLAGS)

# The whole `versus train` process against bench/perf/torch_train_process.py (TRAIN_PROCESS_FLAGS, e.g.
# "--reps 5"; --clock cpu when BENCH_FLAGS has it; needs $$VERSUS_DATA/mnist, else the entry is skipped
# with a message).
TRAIN_PROCESS_FLAGS = --threads 1 --reps 3
# resnet18 exported from PyTorch and run through ONNX (bench/perf/onnx_compare.py: the forward at batch 8
# and IG-50 on one image at 224x224, pairwise against PyTorch; ONNX_COMPARE_FLAGS, e.g. "--size 112").
ONNX_COMPARE_FLAGS = --threads 1 --reps 3
bench-compare: bench/vs_bench$(EXEEXT) versus$(EXEEXT)
	./bench/vs_bench$(EXEEXT) --json bench/versus.jsonl $(BENCH_FLAGS)
	@if $(BENCH_PY3) -c 'import torch, numpy' >/dev/null 2>&1; then \
	    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(BENCH_PY3) $(srcdir)/bench/perf/torch_reference.py \
	        bench/versus.jsonl > bench/reference.jsonl && \
	    ./bench/vs_bench$(EXEEXT) --filter $(RSS_WORKLOAD) --threads 1 --reps 5 --rss | grep '"suite":"rss"' > bench/rss.jsonl && \
	    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(BENCH_PY3) $(srcdir)/bench/perf/torch_reference.py \
	        --rss $(RSS_WORKLOAD) 1 --reps 5 | grep '"suite":"rss"' >> bench/rss.jsonl && \
	    clock=$$(case " $(BENCH_FLAGS) " in *" --clock cpu "*) echo --clock cpu;; esac) && \
	    VERSUS_DATA="$${VERSUS_DATA:-$(abs_top_srcdir)/../shared/datasets}" $(BENCH_PY3) $(srcdir)/bench/perf/train_process.py \
	        ./versus$(EXEEXT) $(TRAIN_PROCESS_FLAGS) $$clock > bench/process.jsonl && \
	    : > bench/onnx.jsonl && $(BENCH_PY3) $(srcdir)/bench/perf/onnx_compare.py ./versus$(EXEEXT) $(ONNX_COMPARE_FLAGS) $$clock \
	        --json bench/onnx.jsonl && \
	    $(BENCH_PY3) $(srcdir)/bench/perf/compare.py \
	        --commit "$$(./versus$(EXEEXT) --version | sed -n 's/.*(commit \(.*\))$$/\1/p')" \
	        bench/versus.jsonl bench/reference.jsonl bench/rss.jsonl bench/process.jsonl bench/onnx.jsonl > bench/compare.md && \
	    echo && cat bench/compare.md; \
	else \
	    echo "bench-compare: $(BENCH_PY3) lacks torch or numpy; skipping the PyTorch/numpy comparison"; \
	fi

# The same comparison BENCH_ROUNDS times (default 3): each round is `make bench-compare` with its lines
# kept in bench/rounds/N/, then every ratio per round with its median across rounds (compare.py --summary,
# bench/summary.md): one run's ratio moves with the machine by several percent (bench/results/perf.md).
BENCH_ROUNDS = 3
bench-compare-rounds: bench/vs_bench$(EXEEXT) versus$(EXEEXT)
	@if ! $(BENCH_PY3) -c 'import torch, numpy' >/dev/null 2>&1; then \
	    echo "bench-compare-rounds: $(BENCH_PY3) lacks torch or numpy; skipping the PyTorch/numpy comparison"; exit 0; fi; \
	case "$(BENCH_ROUNDS)" in ''|*[!0-9]*|0) echo "bench-compare-rounds: BENCH_ROUNDS=$(BENCH_ROUNDS): expected a count of 1 or more" >&2; exit 2;; esac; \
	rm -rf bench/rounds; dirs=; \
	for r in $$(seq $(BENCH_ROUNDS)); do \
	    d=bench/rounds/$$r; \
	    $(MAKE) --no-print-directory bench-compare >/dev/null && mkdir -p $$d && \
	    cp bench/versus.jsonl bench/reference.jsonl bench/process.jsonl bench/rss.jsonl bench/onnx.jsonl $$d/ || exit 1; \
	    dirs="$$dirs $$d"; echo "bench-compare-rounds: round $$r of $(BENCH_ROUNDS) done"; \
	done; \
	$(BENCH_PY3) $(srcdir)/bench/perf/compare.py --summary \
	    --commit "$$(./versus$(EXEEXT) --version | sed -n 's/.*(commit \(.*\))$$/\1/p')" $$dirs > bench/summary.md && \
	echo && cat bench/summary.md
CLEANFILES += bench/summary.md
clean-local: clean-bench-rounds
clean-bench-rounds:
	rm -rf bench/rounds

.PHONY: bench bench-compare bench-compare-rounds clean-bench-rounds

# Time per attribution against PyTorch (needs VERSUS_DATA and python3-torch): make bench-explain
EXTRA_DIST += bench/perf/explain.sh bench/perf/torch_explain.py
bench-explain: versus$(EXEEXT)
	VERSUS_DATA="$${VERSUS_DATA:-$(abs_top_srcdir)/../shared/datasets}" $(SHELL) $(top_srcdir)/bench/perf/explain.sh
.PHONY: bench-explain
