# nn: sources of libversus (or the program) and their headers.
