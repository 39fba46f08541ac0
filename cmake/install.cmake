# What `cmake --install` puts on a machine, and the .deb CPack makes of it (`cpack -G DEB` in the build folder):
# the lane-tune binary, the systemd units (their ExecStart naming the installed binary), the sysusers.d file that
# makes the lane-tune user, and the .deb's control files (its dependencies found by dpkg-shlibdeps, plus the
# recommended tools a worker runs).
include(GNUInstallDirs)

install(TARGETS lane-tune RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
# The units are configured at install time, when the prefix is known (the .deb installs under /usr, a plain
# `cmake --install` under /usr/local unless told otherwise).
install(CODE "set(LT_UNIT_SOURCES \"${PROJECT_SOURCE_DIR}/deploy/systemd\")
              set(LT_UNIT_STAGING \"${PROJECT_BINARY_DIR}/deploy/units-for-install\")
              set(LT_BINDIR_RELATIVE \"${CMAKE_INSTALL_BINDIR}\")"
        COMPONENT runtime)
install(SCRIPT ${PROJECT_SOURCE_DIR}/deploy/systemd/install_units.cmake COMPONENT runtime)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/systemd/lane-tune.sysusers DESTINATION lib/sysusers.d
        RENAME lane-tune.conf COMPONENT runtime)

set(CPACK_PACKAGE_NAME lane-tune)
set(CPACK_PACKAGE_VENDOR "lane-tune")
set(CPACK_PACKAGE_CONTACT "lane-tune maintainers <lane-tune@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GGUF-to-CUDA lane compiler and tuning service")
set(CPACK_PACKAGE_DESCRIPTION
    "lane-tune compiles a GGUF checkpoint into one self-contained CUDA program and tunes it: a coordinator (gRPC, "
    "SQLite) hands knob configurations to GPU workers, which build them with nvcc and measure them. Workers need the "
    "CUDA toolkit (nvcc, CUPTI) and an NVIDIA driver, which Debian's main archive does not carry.")
set(CPACK_GENERATOR DEB)
# Installed under DESTDIR with the real prefix, so that the units configured at install time name /usr/bin/lane-tune.
set(CPACK_SET_DESTDIR ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Beside the libraries dpkg-shlibdeps finds: what `lane-tune worker` and `build` run (nvidia-smi comes with the
# driver, nvcc with the CUDA toolkit; nvcc needs a host compiler) and what creates the service's user.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "g++, systemd")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "nvidia-smi, sqlite3")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/deploy/debian/postinst)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
