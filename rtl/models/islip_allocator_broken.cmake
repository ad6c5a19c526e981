# A deliberately broken iSLIP: rtl/islip_allocator.sv with an injected fault
# (FABRICSIM_FAULT_ISLIP_EVERY_ITERATION: pointers move for accepts of every iteration, not
# the first only; it needs k > 1 to show), test only: tests/test_rtl_cosim.cpp adds it to show that lockstep catches it,
# by its pointer state before its grants; the fabricsim binary neither links nor lists it.
fabricsim_rtl_model(islip_allocator_broken
  TWIN        allocator islip
  FILELIST    ../islip_allocator.f
  TOP         islip_allocator
  CLOCK       clk_i
  RESET       rst_ni ACTIVE_LOW ASYNC
  HANDSHAKE   STROBE update_i
  LATENCY     0
  PORTS       req=req_i gnt=gnt_o
  SIZE_PARAMS inputs=NumIn outputs=NumOut iterations=Iterations
  SIZES       16:4
  DEBUG       grant_ptr=dbg_gptr_o accept_ptr=dbg_aptr_o
  VERILATOR_ARGS +define+FABRICSIM_FAULT_ISLIP_EVERY_ITERATION
  TEST_ONLY)
