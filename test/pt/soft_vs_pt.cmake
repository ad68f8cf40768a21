# pt-soft-vs-pt: soft trace of a real program vs. the PT trace re-encoded from it.
if(NOT EXISTS ${CC})
  message("SKIP: ${CC} is not built (the LLVM pass component)")
  return()
endif()
set(P ${DIR}/pt-demo)
execute_process(COMMAND ${CC} -O1 -o ${P} ${SRC} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc)
  message("SKIP: ptcall-cc cannot build ${SRC}: ${err}")
  return()
endif()
execute_process(COMMAND ${PTCALL} record --backend soft -q -o ${DIR}/pt-demo-soft.ptc -- ${P}
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(rc)
  message("SKIP: the soft backend cannot record here: ${err}")
  return()
endif()
execute_process(COMMAND ${CONV} ${DIR}/pt-demo-soft.ptc ${DIR}/pt-demo-pt.ptc RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "pt_soft2pt failed")
endif()
# Normalisation: the first line names the file and backend. `calls`: threads are printed in
# the order the session first saw them, and TIME is relative to the first event fed - both
# depend on feeding order (soft chunks interleave in the file; PT pieces are fed in time
# order) - so compare each thread's lines in order, without the TIME column. The session does
# not check sequence numbers of chunks it hands to the PT front-end, so it reports the PT
# chunks of the pid-0 stream as "missing": drop that summary (reported to the decoder owner).
set(NORM_calls "tail -n +2 | grep -v -e 'chunk missing' -e 'chunks missing' | sed -E 's/^ *-?[0-9]+[.][0-9]+ //' | awk '{t=\"\"; for (i = 1; i <= NF; i++) if (\$i ~ /^[0-9]+[/][0-9]+\$/) { t = \$i; break } print t \"\\t\" \$0}' | sort -s -t '\t' -k1,1")
set(NORM_report "tail -n +2 | grep -v -e '^events ' -e 'chunk missing' -e 'chunks missing'")
foreach(cmd calls report)
  set(A ${DIR}/pt-demo-${cmd}-soft.txt)
  execute_process(COMMAND sh -c "'${PTCALL}' ${cmd} '${DIR}/pt-demo-soft.ptc' | ${NORM_${cmd}} > '${A}'"
                  RESULT_VARIABLE ra)
  file(SIZE ${A} sa)
  if(ra OR sa LESS 200)
    message(FATAL_ERROR "ptcall ${cmd} of the soft trace failed or printed almost nothing")
  endif()
  foreach(dec fast libipt)
    set(B ${DIR}/pt-demo-${cmd}-pt-${dec}.txt)
    execute_process(COMMAND sh -c "PTCALL_PT_DECODER=${dec} '${PTCALL}' ${cmd} '${DIR}/pt-demo-pt.ptc' | ${NORM_${cmd}} > '${B}'")
    execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${A} ${B} RESULT_VARIABLE diff)
    if(diff)
      execute_process(COMMAND sh -c "diff '${A}' '${B}' | head -20" OUTPUT_VARIABLE d)
      message(FATAL_ERROR "ptcall ${cmd} differs between the soft trace and its PT re-encoding "
                          "(decoder ${dec}):\n${d}")
    endif()
    file(SIZE ${B} sb)
    message("ptcall ${cmd}: identical for the soft trace and its PT re-encoding (${dec}), ${sb} bytes")
  endforeach()
endforeach()
