# A deliberately broken round-robin arbiter: rtl/rr_arbiter.sv with an injected fault
# (FABRICSIM_FAULT_RR_HOLD: the pointer stays on the winner), test only: tests/test_rtl_arbiter.cpp adds it to show that
# lockstep catches it by its pointer; the fabricsim binary neither links nor lists it.
fabricsim_rtl_model(rr_arbiter_stuck
  TWIN        arbiter round_robin
  FILELIST    ../rr_arbiter.f
  TOP         rr_arbiter
  CLOCK       clk_i
  RESET       rst_ni ACTIVE_LOW ASYNC
  HANDSHAKE   STROBE update_i
  LATENCY     0
  PORTS       req=req_i gnt=gnt_o
  SIZE_PARAMS requesters=NumReq
  SIZES       16
  DEBUG       ptr=ptr_o
  VERILATOR_ARGS +define+FABRICSIM_FAULT_RR_HOLD
  TEST_ONLY)
