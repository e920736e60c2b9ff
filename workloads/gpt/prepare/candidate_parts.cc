// The fixed parts of build/train and build/serve other than their mains and
// the matrix products, as one translation unit. ratchet builds every
// candidate from scratch in a clean copy of its commit, and most of the
// time of these small files goes to parsing the same standard headers;
// compiled together they cost about a third. (The judges are built from
// the files one by one.)
#include "checkpoint.cc"
#include "files.cc"
#include "manifest.cc"
#include "run_env.cc"
#include "serve_protocol.cc"
#include "sha256.cc"
