#!/bin/sh
# Gate "build": configure and build textkit and its tests from scratch.
# A fresh build folder each time, so nothing an earlier candidate left in
# build/ (it is git-ignored, so scope checks do not see it) takes part.
set -eu
rm -rf build
cmake -S . -B build -DCMAKE_BUILD_TYPE=Debug -Wno-dev >build.configure.log 2>&1 ||
  { cat build.configure.log; exit 1; }
cmake --build build -j 2
