# What `cmake --install` puts in the prefix: the libraries, the headers of the
# layers usable on their own (clan_emul, omnitransport, via), the CMake package
# (find_package(clanorb)), clanorb.pc, libclanorb_transports (a linker script,
# so that a plain -lclanorb_transports keeps every plugin's registration) and
# libclanorb_preload.so.
include(CMakePackageConfigHelpers)

set_target_properties(clanorb_via PROPERTIES EXPORT_NAME via)
set_target_properties(clanorb_glue PROPERTIES EXPORT_NAME glue)
set_target_properties(clanorb_clan PROPERTIES EXPORT_NAME clan)
set_target_properties(clanorb_otp PROPERTIES EXPORT_NAME otp)
set_target_properties(clanorb_giop_via PROPERTIES EXPORT_NAME giop_via)
set_target_properties(clanorb_transports PROPERTIES EXPORT_NAME transports)

# The layers usable on their own can be linked by name (-lclanorb_via).
set(CLANORB_LAYERS clan_emul omnitransport clanorb_via)
install(TARGETS ${CLANORB_LAYERS} clanorb_transports EXPORT clanorb-targets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# The plugins cannot: linked by name they would come without their
# registration anchors, link cleanly and lack the transports at run time. So
# -lclanorb_clan finds nothing and the link fails: their archives live in
# lib/clanorb/, and their shared libraries (in lib/, for the loader) have no
# libclanorb_clan.so link-time name. clanorb::transports, libclanorb_transports
# and clanorb.pc name them by their full file names.
set(CLANORB_PLUGINS clanorb_clan clanorb_otp clanorb_giop_via clanorb_glue)
install(TARGETS ${CLANORB_PLUGINS} EXPORT clanorb-targets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}/clanorb
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_SKIP)
install(TARGETS clanorb_preload LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS clanorb_plugins LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/clanorb)
install(FILES $<TARGET_OBJECTS:clanorb_anchors>
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/clanorb RENAME registration_anchors.o)

# Sources include these as "clan_emul/x.hpp", "via/vipl.h": the exported
# include directory is include/clanorb.
set(CLANORB_INCLUDE_ROOT ${CMAKE_INSTALL_INCLUDEDIR}/clanorb)
foreach(layer clan_emul omnitransport)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${layer}/ DESTINATION ${CLANORB_INCLUDE_ROOT}/${layer}
    FILES_MATCHING PATTERN "*.hpp")
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/via/vipl.h DESTINATION ${CLANORB_INCLUDE_ROOT}/via)

set(CLANORB_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/clanorb)
install(EXPORT clanorb-targets NAMESPACE clanorb:: DESTINATION ${CLANORB_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/clanorb-config.cmake.in
  ${PROJECT_BINARY_DIR}/clanorb-config.cmake INSTALL_DESTINATION ${CLANORB_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/clanorb-config-version.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/clanorb-config.cmake ${PROJECT_BINARY_DIR}/clanorb-config-version.cmake
  DESTINATION ${CLANORB_CMAKE_DIR})

# pkg-config and plain -l users: the linker script names the plugin libraries
# and the anchors object by paths relative to itself (GNU ld and gold look
# there), so the prefix can move.
set(CLANORB_LINKED_FILES)
foreach(lib ${CLANORB_PLUGINS} ${CLANORB_LAYERS})
  get_target_property(name ${lib} OUTPUT_NAME)
  if(NOT name)
    set(name ${lib})
  endif()
  if(CLANORB_SHARED)
    set(file lib${name}.so)
    if(lib IN_LIST CLANORB_PLUGINS)
      string(APPEND file .${PROJECT_VERSION_MAJOR})
    endif()
  elseif(lib IN_LIST CLANORB_PLUGINS)
    set(file clanorb/lib${name}.a)
  else()
    set(file lib${name}.a)
  endif()
  string(APPEND CLANORB_LINKED_FILES "\n  ${file}")
endforeach()
if(CLANORB_SHARED)
  set(CLANORB_LIB_SUFFIX ${CMAKE_SHARED_LIBRARY_SUFFIX})
else()
  set(CLANORB_LIB_SUFFIX ${CMAKE_STATIC_LIBRARY_SUFFIX})
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/libclanorb_transports.ld.in
  ${PROJECT_BINARY_DIR}/libclanorb_transports${CLANORB_LIB_SUFFIX} @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/libclanorb_transports${CLANORB_LIB_SUFFIX}
  DESTINATION ${CMAKE_INSTALL_LIBDIR})

file(RELATIVE_PATH CLANORB_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" CLANORB_PC_TO_PREFIX "${CLANORB_PC_TO_PREFIX}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/clanorb.pc.in ${PROJECT_BINARY_DIR}/clanorb.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/clanorb.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
