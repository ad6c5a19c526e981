# A second iSLIP written independently (rtl/islip_allocator_alt.sv): the docs/cosim.md
# "Bring your own block" example.
fabricsim_rtl_model(islip_allocator_alt
  TWIN        allocator islip
  FILELIST    ../islip_allocator_alt.f
  TOP         islip_allocator_alt
  CLOCK       clk_i
  RESET       rst_ni ACTIVE_LOW ASYNC
  HANDSHAKE   STROBE update_i
  LATENCY     0
  PORTS       req=req_i gnt=gnt_o
  SIZE_PARAMS inputs=NumIn outputs=NumOut iterations=Iterations
  SIZES       16:1 16:4)
