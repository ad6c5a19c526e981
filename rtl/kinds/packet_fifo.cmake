# Kind `packet_fifo`: a packet FIFO of words with a last flag, the twin of hw::PacketFifo
# (hw/packet_fifo.h; the transactor is tlm/rtl_packet_fifo.cpp, the switch's input FIFOs).
#   pin roles   wr_valid, wr_data, wr_last   inputs, a word offered this cycle (wr_data: 64 bits,
#                            the packet id) and whether it ends its packet
#               saf          configuration input, 1: store-and-forward, 0: cut-through (static)
#               wr_ready     output, room for a word
#               rd_valid, rd_data, rd_last   outputs, the head word may leave; the head word
#               words, packets   outputs, words and complete packets stored
#   commit      HANDSHAKE STROBE <the read's ready input>: the head word leaves at that edge
#   size roles  depth (words)
#   SIZES       <depth>, e.g. 4096
set(FABRICSIM_RTL_KIND_packet_fifo_INPUTS wr_valid wr_data wr_last)
set(FABRICSIM_RTL_KIND_packet_fifo_CONFIG saf)
set(FABRICSIM_RTL_KIND_packet_fifo_OUTPUTS wr_ready rd_valid rd_data rd_last words packets)
set(FABRICSIM_RTL_KIND_packet_fifo_SIZE_ROLES depth)
set(FABRICSIM_RTL_KIND_packet_fifo_REQUIRED_SIZE_ROLES depth)
set(FABRICSIM_RTL_KIND_packet_fifo_SIZE_SYNTAX "<depth in words>, e.g. 4096")

# Parses one SIZES entry (see rtl/kinds/allocator.cmake for the outputs).
function(fabricsim_rtl_size_packet_fifo size tag sizes values)
  if(NOT size MATCHES "^([1-9][0-9]*)$")
    set(${tag} "" PARENT_SCOPE)
    return()
  endif()
  set(${tag} d${CMAKE_MATCH_1} PARENT_SCOPE)
  set(${sizes} "${CMAKE_MATCH_1}" PARENT_SCOPE)
  set(${values} "depth=${CMAKE_MATCH_1}" PARENT_SCOPE)
endfunction()
