# autograd: sources of libversus (or the program) and their headers.
versusinclude_HEADERS += include/versus/versus.h include/versus/error.h include/versus/rng.h include/versus/tensor.h include/versus/ops.h
libversus_la_SOURCES += autograd/error.c autograd/rng.c autograd/version.c
include $(top_srcdir)/autograd/kernels.mk
