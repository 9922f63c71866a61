# datasets/tabular.mk - CSV parsing, one-hot tabular encoding, the tabular presets, dataset describe.
versusinclude_HEADERS += include/versus/tabular.h include/versus/describe.h
libversus_la_SOURCES += datasets/tabular.c datasets/tabular_presets.c datasets/describe.c

if HAVE_CHECK
check_PROGRAMS += tests/test_csv tests/test_tabular
TESTS += tests/test_csv tests/test_tabular
endif

