# The deliberately broken round-robin arbiter (rtl/test/rr_arbiter_stuck.sv: the pointer
# stays on the winner), test only: tests/test_rtl_arbiter.cpp adds it to show that
# lockstep catches it by its pointer; the fabricsim binary neither links nor lists it.
fabricsim_rtl_model(rr_arbiter_stuck
  TWIN        arbiter round_robin
  FILELIST    ../test/rr_arbiter_stuck.f
  TOP         rr_arbiter_stuck
  CLOCK       clk_i
  RESET       rst_ni ACTIVE_LOW ASYNC
  HANDSHAKE   STROBE update_i
  LATENCY     0
  PORTS       req=req_i gnt=gnt_o
  SIZE_PARAMS requesters=NumReq
  SIZES       16
  DEBUG       ptr=ptr_o
  TEST_ONLY)
