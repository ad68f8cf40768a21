# Build step (cmake -P, from cmake/Packaging.cmake): the manual pages and the bash completion,
# written by the built ptcall from its option table (`ptcall help --man PAGE`, `--man-pages`,
# `--bash-completion`), plus ptcall-cc(1), configured from pass/ptcall-cc.1.in.
# In: PTCALL (the ptcall executable), OUT (a directory this step owns), CC_PAGE (ptcall-cc.1).
# Out: OUT/man1/*.1 and *.1.gz (gzip -9n: what Debian installs), OUT/completion/ptcall.
foreach(v PTCALL OUT CC_PAGE)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "PtcallDocs.cmake: -D${v}=... is missing")
  endif()
endforeach()
find_program(GZIP gzip REQUIRED)
# every page is remade: a page of a command that no longer exists must not stay behind
file(REMOVE_RECURSE ${OUT}/man1 ${OUT}/completion)
file(MAKE_DIRECTORY ${OUT}/man1 ${OUT}/completion)

function(ptcall_help out)
  execute_process(COMMAND ${PTCALL} help ${ARGN} OUTPUT_FILE ${out} RESULT_VARIABLE rc
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ptcall help ${ARGN} failed (${rc}): ${err}")
  endif()
endfunction()

ptcall_help(${OUT}/man1/pages.txt --man-pages)
file(STRINGS ${OUT}/man1/pages.txt pages)
file(REMOVE ${OUT}/man1/pages.txt)
foreach(page ${pages})
  ptcall_help(${OUT}/man1/${page}.1 --man ${page})
endforeach()
file(COPY_FILE ${CC_PAGE} ${OUT}/man1/ptcall-cc.1)
file(WRITE ${OUT}/man1/ptcall-c++.1 ".so man1/ptcall-cc.1\n")
file(GLOB made ${OUT}/man1/*.1)
foreach(f ${made})
  execute_process(COMMAND ${GZIP} -9nkf ${f} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gzip -9n ${f} failed (${rc})")
  endif()
endforeach()
ptcall_help(${OUT}/completion/ptcall --bash-completion)
