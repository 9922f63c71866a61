# bench: `make bench` builds and runs the benchmarks; `make bench-compare` adds PyTorch in the same run.
EXTRA_PROGRAMS += bench/vs_bench
bench_vs_bench_SOURCES = bench/bench_main.c
bench_vs_bench_LDADD = libversus.la -lm
CLEANFILES += bench/vs_bench
EXTRA_DIST += bench/torch_reference.py

bench: bench/vs_bench$(EXEEXT)
	./bench/vs_bench$(EXEEXT)

.PHONY: bench

# Time per attribution against PyTorch (needs VERSUS_DATA and python3-torch): make bench-explain
EXTRA_DIST += bench/explain.sh bench/torch_explain.py
bench-explain: versus$(EXEEXT)
	VERSUS_DATA="$${VERSUS_DATA:-$(abs_top_srcdir)/../shared/datasets}" $(SHELL) $(top_srcdir)/bench/explain.sh
.PHONY: bench-explain
