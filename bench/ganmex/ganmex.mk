# bench/ganmex: the GANMEX paper's evaluation (Fig. 2, the metrics, cascading randomisation), `versus bench ganmex`.
noinst_HEADERS += bench/ganmex/ganmex_bench.h
libversus_la_SOURCES += bench/ganmex/experiment.c bench/ganmex/report.c bench/ganmex/claims.c
versus_SOURCES += bench/ganmex/cli.c
EXTRA_DIST += bench/ganmex/identity_torch.py
