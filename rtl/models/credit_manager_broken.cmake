# A deliberately broken credit manager: rtl/credit_manager.sv with an injected fault
# (FABRICSIM_FAULT_CREDIT_ROUND_DOWN: a packet's blocks rounded down), test only: tests/test_rtl_credit_manager.cpp adds it to show that
# lockstep catches it; the fabricsim binary neither links nor lists it.
fabricsim_rtl_model(credit_manager_broken
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
  SIZES       1
  DEBUG       lent=dbg_used_o
  VERILATOR_ARGS +define+FABRICSIM_FAULT_CREDIT_ROUND_DOWN
  TEST_ONLY)
