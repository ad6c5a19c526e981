# Kind `allocator`: a switch allocator, the twin of an hw::SwitchAllocator policy
# (hw::make_allocator; the transactor is tlm/rtl_allocator.cpp).
#   pin roles   req  input,  req[i][o] (bit i*N + o): input i requests output o
#               gnt  output, gnt[i][o]: the matching, same layout
#   size roles  inputs, outputs (both the switch radix), iterations (optional)
#   SIZES       <ports>:<iterations>, e.g. 16:4
set(FABRICSIM_RTL_KIND_allocator_INPUTS req)
set(FABRICSIM_RTL_KIND_allocator_OUTPUTS gnt)
set(FABRICSIM_RTL_KIND_allocator_SIZE_ROLES inputs outputs iterations)
set(FABRICSIM_RTL_KIND_allocator_REQUIRED_SIZE_ROLES inputs outputs)
set(FABRICSIM_RTL_KIND_allocator_SIZE_SYNTAX "<ports>:<iterations>, e.g. 16:4")

# Parses one SIZES entry: `tag` names the build, `sizes` is the C++ initialiser of
# RtlModelInfo::sizes, `values` the size roles' values (role=value list).
function(fabricsim_rtl_size_allocator size tag sizes values)
  fabricsim_rtl_size_pair("${size}" n k)
  set(${tag} "" PARENT_SCOPE)
  if(NOT n STREQUAL "")
    set(${tag} n${n}_k${k} PARENT_SCOPE)
    set(${sizes} "${n}, ${k}" PARENT_SCOPE)
    set(${values} "inputs=${n};outputs=${n};iterations=${k}" PARENT_SCOPE)
  endif()
endfunction()
