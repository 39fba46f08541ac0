# Installs the systemd units with ExecStart naming the binary where it is installed (run by `cmake --install`, with
# LT_UNIT_SOURCES, LT_UNIT_STAGING and LT_BINDIR_RELATIVE set by cmake/install.cmake).
set(LT_BINDIR "${CMAKE_INSTALL_PREFIX}/${LT_BINDIR_RELATIVE}")
file(GLOB templates "${LT_UNIT_SOURCES}/*.service.in")
set(units "${LT_UNIT_SOURCES}/lane-tune-nightly.timer")
foreach(t IN LISTS templates)
  get_filename_component(name "${t}" NAME)
  string(REGEX REPLACE "\\.in$" "" name "${name}")
  configure_file("${t}" "${LT_UNIT_STAGING}/${name}" @ONLY)
  list(APPEND units "${LT_UNIT_STAGING}/${name}")
endforeach()
file(INSTALL ${units} DESTINATION "${CMAKE_INSTALL_PREFIX}/lib/systemd/system" FILE_PERMISSIONS OWNER_READ OWNER_WRITE
     GROUP_READ WORLD_READ)
