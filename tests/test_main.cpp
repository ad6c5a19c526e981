// GoogleTest entry for suites linked against libsystemc: libsystemc.so needs an
// sc_main symbol; tests never call it.
#include <cstdlib>

#include <gtest/gtest.h>
#include <systemc>

int sc_main(int, char*[]) { return 0; }

int main(int argc, char** argv) {
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
