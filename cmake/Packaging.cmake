# Installed like a real tool (docs/install.md): the manual pages and the bash completion, made
# by the built ptcall from its one option table; ptcall.pc for ptcall.h and libptcall; the
# CMake package (find_package(ptcall): ptcall::runtime, ptcall_instrument()); and the Debian
# package, one per LLVM version (ptcall-llvmN), which scripts/package.sh makes with cpack.
include(CMakePackageConfigHelpers)

get_filename_component(PTCALL_CLANG_NAME ${PTCALL_CLANG} NAME)
get_filename_component(PTCALL_CLANGXX_NAME ${PTCALL_CLANGXX} NAME)

# where pass/CMakeLists.txt installs the plugin: LIBDIR/ptcall/llvm-N where the build knows
# its release as PTCALL_LLVM_MAJOR (releases side by side), LIBDIR/ptcall before
if(DEFINED PTCALL_LLVM_MAJOR)
  set(PTCALL_PLUGIN_DIR ${CMAKE_INSTALL_LIBDIR}/ptcall/llvm-${PTCALL_LLVM_MAJOR})
else()
  set(PTCALL_PLUGIN_DIR ${CMAKE_INSTALL_LIBDIR}/ptcall)
endif()
file(RELATIVE_PATH PTCALL_PLUGIN_SUBDIR ${CMAKE_INSTALL_FULL_LIBDIR}
     ${CMAKE_INSTALL_PREFIX}/${PTCALL_PLUGIN_DIR})

# ---- manual pages and bash completion (cmake/PtcallDocs.cmake runs the built ptcall)
set(PTCALL_DOCS_DIR ${CMAKE_BINARY_DIR}/docs-gen)
configure_file(${PROJECT_SOURCE_DIR}/pass/ptcall-cc.1.in ${CMAKE_BINARY_DIR}/pass/ptcall-cc.1 @ONLY)
add_custom_command(OUTPUT ${PTCALL_DOCS_DIR}/completion/ptcall
                   COMMAND ${CMAKE_COMMAND} -DPTCALL=$<TARGET_FILE:ptcall> -DOUT=${PTCALL_DOCS_DIR}
                           -DCC_PAGE=${CMAKE_BINARY_DIR}/pass/ptcall-cc.1
                           -P ${PROJECT_SOURCE_DIR}/cmake/PtcallDocs.cmake
                   DEPENDS ptcall ${PROJECT_SOURCE_DIR}/cmake/PtcallDocs.cmake
                           ${CMAKE_BINARY_DIR}/pass/ptcall-cc.1
                   COMMENT "man pages and bash completion from ptcall's option table")
add_custom_target(ptcall_docs ALL DEPENDS ${PTCALL_DOCS_DIR}/completion/ptcall)
install(DIRECTORY ${PTCALL_DOCS_DIR}/man1/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
        FILES_MATCHING PATTERN "*.1.gz")
install(FILES ${PTCALL_DOCS_DIR}/completion/ptcall
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)

# ---- ptcall.pc, written at install time with the prefix installed to (cmake --install
# --prefix DIR may differ from the configured one)
install(CODE "
  set(PTCALL_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  set(PTCALL_PC_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")
  set(PTCALL_PC_INCLUDEDIR \"${CMAKE_INSTALL_INCLUDEDIR}\")
  set(PROJECT_VERSION \"${PROJECT_VERSION}\")
  configure_file(\"${PROJECT_SOURCE_DIR}/cmake/ptcall.pc.in\" \"${CMAKE_BINARY_DIR}/ptcall.pc\" @ONLY)
")
install(FILES ${CMAKE_BINARY_DIR}/ptcall.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# ---- the CMake package: LIBDIR/cmake/ptcall/ptcallConfig.cmake (relocatable)
set(PTCALL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ptcall)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ptcallConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/cmake-package/ptcallConfig.cmake
                              INSTALL_DESTINATION ${PTCALL_CMAKE_DIR}
                              PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR
                                        CMAKE_INSTALL_BINDIR PTCALL_PLUGIN_DIR)
# 0.x: a minor version may change the API
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cmake-package/ptcallConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/cmake-package/ptcallConfig.cmake
              ${CMAKE_BINARY_DIR}/cmake-package/ptcallConfigVersion.cmake
        DESTINATION ${PTCALL_CMAKE_DIR})

# ---- what an install needs built: scripts/package.sh builds this target only (not the
# tests) and runs cpack with CMAKE_SKIP_INSTALL_ALL_DEPENDENCY
add_custom_target(ptcall_installed)
foreach(t ptcall ptcall_rt ptcall_fuzz_driver ptcall_pass ptcall_wrappers ptcall_web_files
          ptcall_docs)
  if(TARGET ${t})
    add_dependencies(ptcall_installed ${t})
  endif()
endforeach()

# ---- the Debian package: ptcall-llvmN_VERSION-1_ARCH.deb. One package per LLVM version;
# they install the same files, so each Provides and Conflicts with the virtual package
# `ptcall` (installing one replaces the other). The wrappers drive clang-N: it is a
# dependency; the libraries' dependencies come from dpkg-shlibdeps, and those of the
# libraries loaded when first needed from PtcallLoadedLib.cmake.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ptcall-llvm${LLVM_VERSION_MAJOR})
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "ptcall developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "function-level tracer for C and C++ (Intel PT or software), built for LLVM ${LLVM_VERSION_MAJOR}")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "ptcall-cc and ptcall-c++ compile with an LLVM ${LLVM_VERSION_MAJOR} pass\nthat gives every function disarmed entry and exit stubs; ptcall record\ntraces the program with Intel PT or in software, and ptcall report,\ncalls, graph, export, diff, db and serve analyse the traces.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# libpq and libmicrohttpd are loaded when first needed (cmake/PtcallLoadedLib.cmake), so
# dpkg-shlibdeps cannot see them: their packages are named here
get_property(PTCALL_LOADED_PACKAGES GLOBAL PROPERTY PTCALL_LOADED_PACKAGES)
list(REMOVE_DUPLICATES PTCALL_LOADED_PACKAGES)
string(REPLACE ";" ", " PTCALL_LOADED_DEPENDS "${PTCALL_LOADED_PACKAGES}")
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${PTCALL_CLANG_NAME}, ${PTCALL_LOADED_DEPENDS}")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_PROVIDES ptcall)
set(CPACK_DEBIAN_PACKAGE_CONFLICTS ptcall)
set(CPACK_DEBIAN_PACKAGE_REPLACES ptcall)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/package)
include(CPack)
