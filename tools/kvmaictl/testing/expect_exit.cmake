# cmake -DCMD=prog -DARGS="a|b" -DEXPECT=N -P expect_exit.cmake
# Runs CMD ARGS and fails unless it exits with EXPECT.
string(REPLACE "|" ";" ARGS "${ARGS}")
execute_process(COMMAND ${CMD} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL EXPECT)
  message(FATAL_ERROR "${CMD} ${ARGS}: exit ${rc}, expected ${EXPECT}\nstdout: ${out}\nstderr: ${err}")
endif()
