# datasets/synth.mk
# Synthetic data with planted ground truth, splits and the SNX pairing protocol.
versusinclude_HEADERS += include/versus/synth.h include/versus/pairs.h
noinst_HEADERS += datasets/synth_common.h tests/vs_expect.h
libversus_la_SOURCES += datasets/synth_common.c datasets/synth_tabular.c datasets/synth_graph.c \
	datasets/synth_images.c datasets/pairs.c
if HAVE_CHECK
check_PROGRAMS += tests/test_synth tests/test_pairs
TESTS += tests/test_synth tests/test_pairs
endif
