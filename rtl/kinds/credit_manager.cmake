# Kind `credit_manager`: a link transmitter's per-VL credit accounting, the twin of one
# hw::CreditCounter per VL (hw/credit.h; the transactor is tlm/rtl_credit_manager.cpp).
#   pin roles   capacity       input,  receiver buffer per VL in blocks (static)
#               head_bytes     input,  bytes of the packet asked about, per VL
#               consume_vl, consume_bytes  inputs, the packet a consume takes credits for
#               restore, restore_vl, restore_blocks  inputs, a credit return
#               can_send       output, per VL: enough blocks for head_bytes
#               avail          output, blocks held per VL
#               underflow, overflow  outputs, a refused consume / restore
#   size roles  vls, block_bytes (optional, 64 when the model fixes it)
#   SIZES       <vls> or <vls>:<block bytes>, e.g. 2 or 2:64
set(FABRICSIM_RTL_KIND_credit_manager_INPUTS
    capacity head_bytes consume_vl consume_bytes restore restore_vl restore_blocks)
set(FABRICSIM_RTL_KIND_credit_manager_OUTPUTS can_send avail underflow overflow)
set(FABRICSIM_RTL_KIND_credit_manager_SIZE_ROLES vls block_bytes)
set(FABRICSIM_RTL_KIND_credit_manager_REQUIRED_SIZE_ROLES vls)
set(FABRICSIM_RTL_KIND_credit_manager_SIZE_SYNTAX "<vls> or <vls>:<block bytes>, e.g. 2 or 2:64")

function(fabricsim_rtl_size_credit_manager size tag sizes values)
  if(NOT size MATCHES "^([1-9][0-9]*)(:([1-9][0-9]*))?$")
    set(${tag} "" PARENT_SCOPE)
    return()
  endif()
  set(vls ${CMAKE_MATCH_1})
  set(block 64)
  if(NOT "${CMAKE_MATCH_3}" STREQUAL "")
    set(block ${CMAKE_MATCH_3})
  endif()
  set(${tag} v${vls}_b${block} PARENT_SCOPE)
  set(${sizes} "${vls}, ${block}" PARENT_SCOPE)
  set(${values} "vls=${vls};block_bytes=${block}" PARENT_SCOPE)
endfunction()
