# bench/demo: `versus demo`'s experiment (Siamese networks on planted data explained, one page).
libversus_la_SOURCES += bench/demo/demo.c
