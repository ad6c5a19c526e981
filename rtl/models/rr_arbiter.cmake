# The project's round-robin arbiter (rtl/rr_arbiter.sv): the default
# switch.write_arbiter_rtl_variant and nic.vl_arbiter_rtl_variant.
# 16 requesters: the output_queued write port of examples/single_switch.yaml (radix 16);
# 4: the NIC VL arbiter at vls: 4 (tests/test_rtl_arbiter.cpp).
fabricsim_rtl_model(rr_arbiter
  TWIN        arbiter round_robin
  FILELIST    ../rr_arbiter.f
  TOP         rr_arbiter
  CLOCK       clk_i
  RESET       rst_ni ACTIVE_LOW ASYNC
  HANDSHAKE   STROBE update_i
  LATENCY     0
  PORTS       req=req_i gnt=gnt_o
  SIZE_PARAMS requesters=NumReq
  SIZES       4 16
  DEBUG       ptr=ptr_o)
