# `cmake --install BUILD --prefix P`: P/bin/ratchet and, in P/share/ratchet,
# what `ratchet init` copies: templates/ and every source a template's
# MANIFEST names (workloads/gpt/...), at the same paths as in the source
# tree, so an installed ratchet works like one in the build tree (see
# src/cli/ratchet_home.h for how it finds them).
# (RATCHET_INSTALL_DATADIR is set in the top-level CMakeLists.txt.)
if(TARGET ratchet)
  install(TARGETS ratchet RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(DIRECTORY templates/ DESTINATION ${RATCHET_INSTALL_DATADIR}/templates
        USE_SOURCE_PERMISSIONS)

# Each MANIFEST line is "SOURCE [DESTINATION]", SOURCE relative to the
# source tree, a trailing / for a folder; '#' starts a comment line.
file(GLOB manifests CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/templates/*/MANIFEST)
foreach(manifest ${manifests})
  file(STRINGS ${manifest} lines)
  foreach(line ${lines})
    string(STRIP "${line}" line)
    if(line STREQUAL "" OR line MATCHES "^#")
      continue()
    endif()
    string(REGEX REPLACE "[ \t].*" "" source "${line}")
    if(source MATCHES "^templates/")
      continue()  # installed with templates/ above
    endif()
    set(path ${PROJECT_SOURCE_DIR}/${source})
    get_filename_component(dir ${source} DIRECTORY)
    if(IS_DIRECTORY ${path})
      string(REGEX REPLACE "/$" "" source "${source}")
      install(DIRECTORY ${path}/ DESTINATION ${RATCHET_INSTALL_DATADIR}/${source}
              USE_SOURCE_PERMISSIONS)
    elseif(EXISTS ${path})
      # install(FILES) would drop an executable bit that `ratchet init` keeps.
      execute_process(COMMAND test -x ${path} RESULT_VARIABLE not_executable)
      if(not_executable)
        install(FILES ${path} DESTINATION ${RATCHET_INSTALL_DATADIR}/${dir})
      else()
        install(PROGRAMS ${path} DESTINATION ${RATCHET_INSTALL_DATADIR}/${dir})
      endif()
    else()
      message(FATAL_ERROR "${manifest}: ${source} does not exist")
    endif()
  endforeach()
endforeach()
