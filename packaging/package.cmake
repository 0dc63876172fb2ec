# The Debian package: `cmake --build BUILD --target deb` builds the binary
# and makes BUILD/package/seatwatch_<version>_<arch>.deb.
#
# CPack rather than dpkg-buildpackage: CMake already owns the build and the
# install rules, so the package is those rules plus a few control fields, and
# a checkout needs no debian/ directory kept in step with CMakeLists.txt.
# What debhelper would add by itself is done here by hand: Depends computed
# by dpkg-shlibdeps, a stripped binary, conffiles, copyright and
# changelog.gz. lintian checks the result (tests/package/).
#
# The absolute destinations (/etc, /lib/systemd/system) are the package's
# layout; from a source tree, run the binary with --config instead of
# installing it.

set(_pkg_src ${CMAKE_CURRENT_LIST_DIR})
set(_pkg_gen ${PROJECT_BINARY_DIR}/packaging)
file(MAKE_DIRECTORY ${_pkg_gen})

# The packaged config, made from the example at build time (edits of the
# example reach it), and the gzipped changelog and manual page (gzip -9n:
# lintian wants maximum compression and no timestamp).
add_custom_command(
  OUTPUT ${_pkg_gen}/seatwatch.toml
  COMMAND ${CMAKE_COMMAND} -DIN=${PROJECT_SOURCE_DIR}/config/seatwatch.toml
          -DOUT=${_pkg_gen}/seatwatch.toml -P ${_pkg_src}/packaged-config.cmake
  DEPENDS ${PROJECT_SOURCE_DIR}/config/seatwatch.toml ${_pkg_src}/packaged-config.cmake
  VERBATIM)
foreach(_doc changelog seatwatch.1)
  add_custom_command(
    OUTPUT ${_pkg_gen}/${_doc}.gz
    COMMAND gzip -9n -c ${_pkg_src}/${_doc} > ${_pkg_gen}/${_doc}.gz
    DEPENDS ${_pkg_src}/${_doc})
endforeach()
add_custom_target(seatwatch_package_files ALL
  DEPENDS ${_pkg_gen}/seatwatch.toml ${_pkg_gen}/changelog.gz ${_pkg_gen}/seatwatch.1.gz)

# /usr/bin/seatwatch: the install(TARGETS) rule in daemon/CMakeLists.txt.
install(FILES ${_pkg_gen}/seatwatch.toml DESTINATION /etc/seatwatch)
install(FILES ${_pkg_src}/default DESTINATION /etc/default RENAME seatwatch)
# Where bookworm's debhelper installs units; lintian 2.116 accepts /lib and
# /usr/lib alike (the move to /usr/lib comes with trixie).
install(FILES ${_pkg_src}/seatwatch.service ${_pkg_src}/seatwatch@.service
        DESTINATION /lib/systemd/system)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/queries/ DESTINATION share/seatwatch/queries)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/dashboards/ DESTINATION share/seatwatch/dashboards
        FILES_MATCHING PATTERN "*.json")
# The rules and the example Alertmanager route; not their promtool tests.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/alerts/ DESTINATION share/seatwatch/alerts
        FILES_MATCHING PATTERN "*.yml" PATTERN "tests" EXCLUDE)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/docs/runbook.md
              ${_pkg_src}/copyright ${_pkg_gen}/changelog.gz
        DESTINATION share/doc/seatwatch)
# The pages README.md links, where its relative links find them.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION share/doc/seatwatch/docs
        FILES_MATCHING PATTERN "*.md" PATTERN "*.png")
install(FILES ${_pkg_gen}/seatwatch.1.gz DESTINATION share/man/man1)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME seatwatch)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_CONTACT "seatwatch maintainers <maintainers@users.noreply.a-seed-7bfc329c.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "booking database invariant monitor and Prometheus exporter")
# The extended description; CPack puts the summary above it.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
  "seatwatch watches the PostgreSQL database of a booking system and exports,
for Prometheus, whether seats sold, tickets issued and payments confirmed
agree, where the database is queueing (hot rows, blocking chains) and the
backlog of expired holds. It polls on its own schedule in read-only
transactions with timeouts; scrapes never touch the database.
.
The package ships the daemon, the booking and capacity query packs,
Grafana dashboards, Prometheus alert rules and hardened systemd units.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # seatwatch_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION database)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Depends from the binary's shared libraries (dpkg-shlibdeps, dpkg-dev).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# By hand, beside them: Debian's CivetWeb loads OpenSSL for TLS with
# dlopen("libssl.so") and dlopen("libcrypto.so"), the unversioned names that
# only libssl-dev ships, so dpkg-shlibdeps cannot see that dependency.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libssl-dev")
set(CPACK_STRIP_FILES ON)
# Without debhelper nothing marks /etc files as conffiles by itself. postinst
# and prerm restart the running units on upgrade and stop them on removal.
configure_file(${_pkg_src}/conffiles ${_pkg_gen}/control/conffiles COPYONLY)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
  ${_pkg_gen}/control/conffiles ${_pkg_src}/postinst ${_pkg_src}/prerm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)

# cpack's "preinstall" step would build ALL first (every test suite); the
# package needs only the binary and the generated files, so `deb` builds
# those and runs cpack, and installing no longer builds everything first.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY TRUE)
add_custom_target(deb
  COMMAND ${CMAKE_CPACK_COMMAND} -G DEB -B ${PROJECT_BINARY_DIR}/package
          --config ${PROJECT_BINARY_DIR}/CPackConfig.cmake
  WORKING_DIRECTORY ${PROJECT_BINARY_DIR}
  COMMENT "Making the Debian package in ${PROJECT_BINARY_DIR}/package"
  VERBATIM)
add_dependencies(deb seatwatch seatwatch_package_files)
