# A malformed registration file stops the configure step with a message naming the file
# and what is wrong (rtl/fabricsim_rtl_model.cmake). Run as
#   cmake -DSRC=<source dir> -DCASE=<case> -P rtl_registration_errors.cmake
# for each case below; the test matches the message (tests/CMakeLists.txt).
cmake_minimum_required(VERSION 3.20)
set(PROJECT_SOURCE_DIR ${SRC})
function(fabricsim_rtl_sources filelist out)
  set(${out} "" PARENT_SCOPE)
endfunction()
include(${SRC}/rtl/fabricsim_rtl_model.cmake)
set(FABRICSIM_RTL_REGISTRATION ${SRC}/rtl/models/bad.cmake)

set(good TWIN allocator islip FILELIST ../islip_allocator.f TOP islip_allocator CLOCK clk_i
    RESET rst_ni ACTIVE_LOW ASYNC HANDSHAKE STROBE update_i LATENCY 0)
set(ports PORTS req=req_i gnt=gnt_o)
set(sizes SIZE_PARAMS inputs=NumIn outputs=NumOut iterations=Iterations SIZES 16:1)
if(CASE STREQUAL "unknown_keyword")
  fabricsim_rtl_model(bad ${good} ${ports} ${sizes} FOO bar)
elseif(CASE STREQUAL "unknown_kind")
  list(TRANSFORM good REPLACE "^allocator$" "arbiterx")
  fabricsim_rtl_model(bad ${good} ${ports} ${sizes})
elseif(CASE STREQUAL "missing_port")
  fabricsim_rtl_model(bad ${good} PORTS req=req_i ${sizes})
elseif(CASE STREQUAL "missing_keyword")
  fabricsim_rtl_model(bad ${good} ${sizes})
elseif(CASE STREQUAL "bad_reset")
  fabricsim_rtl_model(bad ${good} ${ports} ${sizes} RESET rst_ni LOW ASYNC)
elseif(CASE STREQUAL "bad_size")
  fabricsim_rtl_model(bad ${good} ${ports} SIZE_PARAMS inputs=NumIn outputs=NumOut SIZES 16x16)
elseif(CASE STREQUAL "missing_size_param")
  fabricsim_rtl_model(bad ${good} ${ports} SIZE_PARAMS inputs=NumIn SIZES 16:1)
endif()
message(FATAL_ERROR "case ${CASE} was accepted")
