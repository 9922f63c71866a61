# nn/io.mk: JSON, .npy and safetensors files.
versusinclude_HEADERS += include/versus/json.h
noinst_HEADERS += nn/io_util.h
libversus_la_SOURCES += nn/io_util.c nn/json.c nn/json_parse.c nn/json_write.c

if HAVE_CHECK
check_PROGRAMS += tests/test_json
TESTS += tests/test_json
tests_test_json_SOURCES = tests/test_json.c
tests_test_json_CFLAGS = $(TEST_CFLAGS)
tests_test_json_LDADD = $(TEST_LIBS)
endif
