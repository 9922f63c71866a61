# datasets/picture.mk
# Pictures: 8-bit images and PNG files, attribution heatmaps and grids, SVG plots, SLIC superpixels.
versusinclude_HEADERS += include/versus/picture.h include/versus/plot.h include/versus/superpixel.h
noinst_HEADERS += datasets/sbuf.h
libversus_la_SOURCES += datasets/image.c datasets/font.c datasets/png.c \
	datasets/heatmap.c datasets/attr_picture.c datasets/sbuf.c datasets/svg.c datasets/svg_graph.c datasets/slic.c

if HAVE_CHECK
check_PROGRAMS += tests/test_png tests/test_plot tests/test_slic
TESTS += tests/test_png tests/test_plot tests/test_slic
endif
