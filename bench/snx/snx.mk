# bench/snx: the SNX paper's evaluation (Tables II-V, Figs. 3-7), `versus bench snx`.
noinst_HEADERS += bench/snx/snx_bench.h bench/snx/snx_results.h
libversus_la_SOURCES += bench/snx/experiment.c bench/snx/items.c bench/snx/report.c
versus_SOURCES += bench/snx/cli.c
