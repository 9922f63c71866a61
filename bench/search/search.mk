# bench/search: Hamilton et al. 2022's evaluation of similarity-search explainers, `versus bench search`.
noinst_HEADERS += bench/search/search_bench.h
libversus_la_SOURCES += bench/search/experiment.c bench/search/data.c bench/search/methods.c bench/search/study.c
versus_SOURCES += bench/search/cli.c
