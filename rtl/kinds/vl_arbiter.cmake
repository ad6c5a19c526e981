# Kind `vl_arbiter`: an output port's IB VL arbiter, the twin of hw::make_ib_vl_arbiter
# (an hw::EgressScheduler; the transactor is tlm/rtl_vl_arbiter.cpp).
#   pin roles   head_bytes   input,  per VL the head packet's bytes (0 = not eligible), 16 bits each
#               high_vl, high_weight, low_vl, low_weight   configuration inputs, per table row
#                            (4-bit VL, 8-bit weight); a C++ table of n entries fills rows 0..n-1
#               high_limit   configuration input, 8 bits (4 KiB units, 255 = unlimited)
#               sel_valid    output, a VL is selected
#               sel_vl       output, the selected VL
#   size roles  vls, table_depth
#   SIZES       <vls>:<table depth>, e.g. 4:8
# Configuration inputs are static: the transactor drives them once after reset and holds them.
set(FABRICSIM_RTL_KIND_vl_arbiter_INPUTS head_bytes)
set(FABRICSIM_RTL_KIND_vl_arbiter_CONFIG high_vl high_weight low_vl low_weight high_limit)
set(FABRICSIM_RTL_KIND_vl_arbiter_OUTPUTS sel_valid sel_vl)
set(FABRICSIM_RTL_KIND_vl_arbiter_SIZE_ROLES vls table_depth)
set(FABRICSIM_RTL_KIND_vl_arbiter_REQUIRED_SIZE_ROLES vls table_depth)
set(FABRICSIM_RTL_KIND_vl_arbiter_SIZE_SYNTAX "<vls>:<table depth>, e.g. 4:8")

# Parses one SIZES entry as rtl/kinds/allocator.cmake does.
function(fabricsim_rtl_size_vl_arbiter size tag sizes values)
  fabricsim_rtl_size_pair("${size}" v t)
  set(${tag} "" PARENT_SCOPE)
  if(NOT v STREQUAL "")
    set(${tag} v${v}_t${t} PARENT_SCOPE)
    set(${sizes} "${v}, ${t}" PARENT_SCOPE)
    set(${values} "vls=${v};table_depth=${t}" PARENT_SCOPE)
  endif()
endfunction()
