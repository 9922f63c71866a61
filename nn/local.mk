# nn: sources of libversus (or the program) and their headers.
include $(top_srcdir)/nn/layers.mk
include $(top_srcdir)/nn/train.mk
include $(top_srcdir)/nn/svae.mk
