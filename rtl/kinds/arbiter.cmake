# Kind `arbiter`: a single-resource arbiter, the twin of an hw::Arbiter policy
# (hw::make_arbiter; the transactor is tlm/rtl_arbiter.cpp).
#   pin roles   req  input,  bit r: requester r bids
#               gnt  output, one-hot grant (all zero: nobody requested)
#   size roles  requesters
#   SIZES       <requesters>, e.g. 16
set(FABRICSIM_RTL_KIND_arbiter_INPUTS req)
set(FABRICSIM_RTL_KIND_arbiter_OUTPUTS gnt)
set(FABRICSIM_RTL_KIND_arbiter_SIZE_ROLES requesters)
set(FABRICSIM_RTL_KIND_arbiter_REQUIRED_SIZE_ROLES requesters)
set(FABRICSIM_RTL_KIND_arbiter_SIZE_SYNTAX "<requesters>, e.g. 16")
# Same pin roles as the allocator kind: its adapter template serves.
set(FABRICSIM_RTL_KIND_arbiter_ADAPTER allocator.cpp.in)

# Parses one SIZES entry (see rtl/kinds/allocator.cmake for the outputs).
function(fabricsim_rtl_size_arbiter size tag sizes values)
  if(NOT size MATCHES "^([1-9][0-9]*)$")
    set(${tag} "" PARENT_SCOPE)
    return()
  endif()
  set(${tag} n${CMAKE_MATCH_1} PARENT_SCOPE)
  set(${sizes} "${CMAKE_MATCH_1}" PARENT_SCOPE)
  set(${values} "requesters=${CMAKE_MATCH_1}" PARENT_SCOPE)
endfunction()
