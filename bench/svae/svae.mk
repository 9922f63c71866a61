# bench/svae: the supervised VAE paper's experiment (Table 1, Figs. 2-7), `versus bench svae`.
noinst_HEADERS += bench/svae/svae_bench.h
libversus_la_SOURCES += bench/svae/experiment.c bench/svae/figures.c
versus_SOURCES += bench/svae/cli.c
