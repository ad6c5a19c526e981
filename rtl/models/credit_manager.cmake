# The project's credit manager (rtl/credit_manager.sv): the default
# link.credit_manager_rtl_variant. 64-byte blocks (IBTA); 1 VL: examples/ib_credit.yaml and
# the co-simulation tests; 2 VLs: the two-VL test fabric.
fabricsim_rtl_model(credit_manager
  TWIN        credit_manager credit_counter
  FILELIST    ../credit_manager.f
  TOP         credit_manager
  CLOCK       clk_i
  RESET       rst_ni ACTIVE_LOW ASYNC
  HANDSHAKE   STROBE consume_i
  LATENCY     0
  PORTS       capacity=cfg_capacity_i head_bytes=head_bytes_i consume_vl=consume_vl_i
              consume_bytes=consume_bytes_i restore=restore_i restore_vl=restore_vl_i
              restore_blocks=restore_blocks_i can_send=can_send_o avail=avail_o
              underflow=underflow_o overflow=overflow_o
  SIZE_PARAMS vls=NumVls block_bytes=BlockBytes
  SIZES       1 2
  DEBUG       lent=dbg_used_o)
