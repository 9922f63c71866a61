# bench/cem: CEM-MAF's Fashion-MNIST evaluation (Table 6, Fig. 7), `versus bench cem`.
noinst_HEADERS += bench/cem/cem_bench.h
libversus_la_SOURCES += bench/cem/experiment.c bench/cem/report.c bench/cem/synth.c
versus_SOURCES += bench/cem/cli.c
