# cmake -DCMD=prog -DARGS="a|b" -DEXPECT=N [-DSTDOUT=regex] [-DSTDERR=regex] -P run_expect.cmake
# Runs CMD ARGS; fails unless it exits with EXPECT and what it printed on
# stdout and stderr matches the regular expressions given.
string(REPLACE "|" ";" ARGS "${ARGS}")
execute_process(COMMAND ${CMD} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(what "${CMD} ${ARGS}: exit ${rc}\nstdout: ${out}\nstderr: ${err}")
if(NOT rc EQUAL EXPECT)
  message(FATAL_ERROR "expected exit ${EXPECT}\n${what}")
endif()
if(DEFINED STDOUT AND NOT out MATCHES "${STDOUT}")
  message(FATAL_ERROR "stdout does not match \"${STDOUT}\"\n${what}")
endif()
if(DEFINED STDERR AND NOT err MATCHES "${STDERR}")
  message(FATAL_ERROR "stderr does not match \"${STDERR}\"\n${what}")
endif()
