# Writes OUT: IN with every FIND replaced by REPLACE; fails if FIND is absent,
# so a planted-bug test cannot silently test the unchanged file.
#   cmake -DIN=train.cpp -DOUT=x.cpp -DFIND=... -DREPLACE=... -P plant.cmake
file(READ "${IN}" text)
string(FIND "${text}" "${FIND}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "plant.cmake: '${FIND}' not found in ${IN}; update the planted test")
endif()
string(REPLACE "${FIND}" "${REPLACE}" text "${text}")
file(WRITE "${OUT}" "${text}")
