#!/bin/sh
# Gate "typecheck": the sources compile with every type warning an error
# (implicit conversions, signedness, prototypes), without producing code.
set -eu
cc -std=c11 -fsyntax-only -Isrc -Wall -Wextra -Wpedantic -Wconversion -Wshadow \
  -Wstrict-prototypes -Wmissing-prototypes -Werror src/*.c
