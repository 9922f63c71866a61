# datasets/io.mk - reading real data: inflate/gzip, IDX (MNIST), TU graph sets; their tests and fuzzers.
versusinclude_HEADERS += include/versus/data_io.h
libversus_la_SOURCES += datasets/inflate.c datasets/idx.c datasets/tu.c datasets/graph_dir.c

if HAVE_CHECK
check_PROGRAMS += tests/test_inflate tests/test_idx tests/test_tu
TESTS += tests/test_inflate tests/test_idx tests/test_tu
endif

# ---- fuzzing (variables and the fuzz / fuzz-run rules are in Makefile.am) ----
FUZZERS += inflate idx tu

fuzz/inflate_fuzz: fuzz/fuzz_inflate.c $(FUZZ_LIB_SRCS)
	$(FUZZ_BUILD)
fuzz/idx_fuzz: fuzz/fuzz_idx.c $(FUZZ_LIB_SRCS) datasets/idx.c
	$(FUZZ_BUILD)
fuzz/tu_fuzz: fuzz/fuzz_tu.c $(FUZZ_LIB_SRCS) datasets/tu.c
	$(FUZZ_BUILD)

fuzz:
	@for f in $(FUZZERS); do $(MAKE) $(AM_MAKEFLAGS) fuzz/$${f}_fuzz || exit 1; done

fuzz-run: fuzz
	@for f in $(FUZZERS); do \
	  mkdir -p fuzz/work/$$f && \
	  echo "fuzzing $$f for $(FUZZ_TIME) s" && \
	  ./fuzz/$${f}_fuzz -max_total_time=$(FUZZ_TIME) -max_len=65536 -artifact_prefix=fuzz/work/$$f- fuzz/work/$$f $(srcdir)/fuzz/corpus/$$f \
	    > fuzz/work/$$f.log 2>&1 || { tail -40 fuzz/work/$$f.log; exit 1; }; \
	  tail -1 fuzz/work/$$f.log; \
	done

CLEANFILES += fuzz/inflate_fuzz fuzz/idx_fuzz fuzz/tu_fuzz
clean-fuzz:
	-rm -rf fuzz/work

.PHONY: fuzz fuzz-run clean-fuzz
EXTRA_DIST += fuzz/fuzz_inflate.c fuzz/fuzz_idx.c fuzz/fuzz_tu.c \
	fuzz/corpus/inflate fuzz/corpus/idx fuzz/corpus/tu
