# A second iSLIP written independently (rtl/islip_allocator_alt.sv) in another house
# style: its own parameter and port names, synchronous active-high reset, registered
# grant with a valid/ready handshake, pointers on debug ports. The docs/cosim.md
# "Bring your own block" example.
fabricsim_rtl_model(islip_allocator_alt
  TWIN        allocator islip
  FILELIST    ../islip_allocator_alt.f
  TOP         islip_allocator_alt
  CLOCK       clock
  RESET       reset ACTIVE_HIGH SYNC
  HANDSHAKE   VALID_READY grant_valid grant_ready
  LATENCY     1
  PORTS       req=request gnt=grant
  SIZE_PARAMS inputs=PORTS outputs=PORTS iterations=ROUNDS
  SIZES       16:1 16:4
  DEBUG       grant_ptr=dbg_grant_ptr accept_ptr=dbg_accept_ptr)
