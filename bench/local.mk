# bench: one folder per paper's experiment (snx, svae, search, cem, ganmex) plus the demo, each with its
# experiment (library code in libversus, returning a vs_report), its report and its flags (cli.c, in the
# versus program); what they share (bench.h: the descriptor of `versus bench NAME`, common.c); and the
# performance harness in bench/perf/.  bench/results/ holds the committed reports.
noinst_HEADERS += bench/bench.h
versus_SOURCES += bench/common.c bench/registry.c
include $(top_srcdir)/bench/snx/snx.mk
include $(top_srcdir)/bench/svae/svae.mk
include $(top_srcdir)/bench/search/search.mk
include $(top_srcdir)/bench/cem/cem.mk
include $(top_srcdir)/bench/ganmex/ganmex.mk
include $(top_srcdir)/bench/demo/demo.mk
include $(top_srcdir)/bench/perf/perf.mk
# every bench's and the demo's report, byte for byte against tests/golden/bench/
TESTS += tests/bench_golden.sh
EXTRA_DIST += tests/bench_golden.sh tests/golden_normalise.py

# bench/twin/: a bench's classifier trained by versus and by PyTorch (twin.py) on the same data, split,
# epochs and optimiser in one run (run.sh); the model is kept under bench/models/NAME with its provenance.
EXTRA_DIST += bench/twin/twin.py bench/twin/run.sh

# One command for every paper's reports: bench/reproduce.sh runs bench/reproduce.plan at one budget
# (BUDGET=quick|paper, OUT=DIR: default versus-results/reproduce-BUDGET; OUT=bench/results replaces the
# committed reports) through GNU parallel and writes OUT/index.md.
EXTRA_DIST += bench/reproduce.sh bench/reproduce.plan
TESTS += tests/reproduce.sh
EXTRA_DIST += tests/reproduce.sh
reproduce: versus$(EXEEXT)
	b="$(BUDGET)"; j="$(JOBS)"; o="$(OUT)"; cd $(top_srcdir) && \
	VERSUS=$(abs_builddir)/versus bench/reproduce.sh --budget "$${b:-quick}" --jobs "$${j:-2}" $${o:+--out "$$o"}
.PHONY: reproduce
