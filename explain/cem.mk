# CEM-MAF (Luss et al.) and CEM (Dhurandhar et al.): pertinent negatives and positives, the DIP-VAE
# probes they need (the experiment: bench/cem/).
versusinclude_HEADERS += include/versus/cem.h include/versus/vae.h
noinst_HEADERS += explain/cem_internal.h
libversus_la_SOURCES += explain/cem_attr.c explain/cem_maf.c explain/cem_pp.c explain/cem_pixel.c explain/cem_figure.c \
	nn/vae_probe.c
if HAVE_CHECK
check_PROGRAMS += tests/test_cem
TESTS += tests/test_cem
endif
