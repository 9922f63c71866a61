# tools/: scripts shipped beside the program, installed under $(pkgdatadir) (share/versus/); build_commit.sh
# prints the commit the build stamps (Makefile.am: build_commit.h).
# torch_to_versus.py writes a PyTorch module as a versus model directory; tests/torch_export.sh runs a
# PyTorch user's path with it (skipped without Debian's python3-torch).
dist_pkgdata_SCRIPTS = tools/torch_to_versus.py
TESTS += tests/torch_export.sh
EXTRA_DIST += tests/torch_export.sh tests/torch_export.py tools/build_commit.sh
