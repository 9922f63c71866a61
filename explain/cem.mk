# CEM-MAF (Luss et al.) and CEM (Dhurandhar et al.): pertinent negatives and positives, the DIP-VAE
# probes they need, and their experiment.
versusinclude_HEADERS += include/versus/cem.h include/versus/vae.h
noinst_HEADERS += explain/cem_internal.h explain/experiment_cem.h
libversus_la_SOURCES += explain/cem_attr.c explain/cem_maf.c explain/cem_pp.c explain/cem_pixel.c explain/cem_figure.c explain/experiment_cem.c explain/experiment_cem_report.c explain/experiment_cem_synth.c \
	nn/vae_probe.c
if HAVE_CHECK
check_PROGRAMS += tests/test_cem
TESTS += tests/test_cem
endif
