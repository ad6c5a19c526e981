# The project's packet FIFO (rtl/packet_fifo.sv): the default switch.input_fifo_rtl_variant,
# one per input and VL of an input_fifo switch, 64-bit words (the packet id, one word per
# buffer cell). 4096 words: examples/single_switch.yaml on credit links (256 KiB of 64 B
# credit blocks) and any 256 KiB input buffer of 64 B cells; 1024 words: the example with
# pfc or none links (256 KiB in 256 B cells) and 64 KiB on credit links.
fabricsim_rtl_model(packet_fifo
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
  SIZES       1024 4096
  PARAMETERS  DataW=64)
