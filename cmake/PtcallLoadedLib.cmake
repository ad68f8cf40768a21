# A library ptcall loads when a command first needs it (dlopen), not at every command's start:
# libpq (db/db_pg_lib.c) and libmicrohttpd (server/web_mhd.c). Each brings a tree of
# libraries whose loading cost every command 8-10 ms on the development VM. The code names
# the library by its SONAME, and the Debian package that holds it goes into the package's
# Depends (dpkg-shlibdeps cannot see a library that is not linked).
#   ptcall_loaded_lib(TARGET PREFIX LIBRARY_FILE DEFAULT_SONAME DEFAULT_PACKAGE)
# defines PREFIX_SONAME and PREFIX_PACKAGE (strings) for TARGET's sources.
function(ptcall_loaded_lib target prefix file default_soname default_package)
  set(soname ${default_soname})
  if(file AND EXISTS "${file}")
    execute_process(COMMAND objdump -p "${file}" OUTPUT_VARIABLE dump ERROR_QUIET)
    if(dump MATCHES "SONAME +([^ \n]+)")
      set(soname ${CMAKE_MATCH_1})
    endif()
  endif()
  set(package ${default_package})
  find_program(PTCALL_DPKG_QUERY dpkg-query)
  if(PTCALL_DPKG_QUERY AND file)
    get_filename_component(real "${file}" REALPATH)
    get_filename_component(dir "${real}" DIRECTORY)
    execute_process(COMMAND dpkg-query -S "${dir}/${soname}" OUTPUT_VARIABLE owner
                    ERROR_QUIET RESULT_VARIABLE r)
    if(r EQUAL 0 AND owner MATCHES "^([^:,]+)")
      set(package ${CMAKE_MATCH_1})
    endif()
  endif()
  target_compile_definitions(${target} PRIVATE ${prefix}_SONAME="${soname}"
                                               ${prefix}_PACKAGE="${package}")
  set_property(GLOBAL APPEND PROPERTY PTCALL_LOADED_PACKAGES ${package})
endfunction()
