# datasets: data sets, their loaders, and (in io/) every file format.  It knows no models.
versusinclude_HEADERS += include/versus/dataset.h
libversus_la_SOURCES += datasets/dataset.c datasets/graph_dir.c
# Each part of datasets/ keeps its own fragment so people working on them do not collide.
include $(top_srcdir)/datasets/io/formats.mk
include $(top_srcdir)/datasets/picture.mk
include $(top_srcdir)/datasets/synth.mk
include $(top_srcdir)/datasets/tabular.mk
versusinclude_HEADERS += include/versus/data_spec.h
libversus_la_SOURCES += datasets/spec.c
