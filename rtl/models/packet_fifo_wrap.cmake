# A deliberately broken packet FIFO, test only: the project's rtl/packet_fifo.sv with the
# mutation FABRICSIM_FAULT_FIFO_WRAP (its write pointer wraps to slot 1, so the second lap
# reads a stale slot 0). tests/test_rtl_packet_fifo.cpp adds it to show that lockstep
# stops it at the first cycle its head differs; the fabricsim binary neither links nor lists it.
fabricsim_rtl_model(packet_fifo_wrap
  TWIN        packet_fifo packet_fifo
  FILELIST    ../packet_fifo.f
  TOP         packet_fifo
  CLOCK       clk_i
  RESET       rst_ni ACTIVE_LOW ASYNC
  HANDSHAKE   STROBE rd_ready_i
  LATENCY     0
  PORTS       wr_valid=wr_valid_i wr_data=wr_data_i wr_last=wr_last_i saf=saf_i wr_ready=wr_ready_o
              rd_valid=rd_valid_o rd_data=rd_data_o rd_last=rd_last_o words=words_o packets=packets_o
  SIZE_PARAMS depth=Depth
  SIZES       1024
  PARAMETERS  DataW=64
  VERILATOR_ARGS +define+FABRICSIM_FAULT_FIFO_WRAP
  TEST_ONLY)
