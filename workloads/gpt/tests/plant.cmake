# Writes OUT: IN with every FIND replaced by REPLACE, then the file APPEND
# (if given) added at the end; fails if FIND is absent, so a planted test
# cannot silently test the unchanged file.
#   cmake -DIN=train.cpp -DOUT=x.cpp -DFIND=... -DREPLACE=... [-DAPPEND=file] -P plant.cmake
file(READ "${IN}" text)
string(FIND "${text}" "${FIND}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "plant.cmake: '${FIND}' not found in ${IN}; update the planted test")
endif()
string(REPLACE "${FIND}" "${REPLACE}" text "${text}")
if(APPEND)
  file(READ "${APPEND}" extra)
  string(APPEND text "\n// ---- planted by tests/plant.cmake from ${APPEND}\n${extra}")
endif()
file(WRITE "${OUT}" "${text}")
