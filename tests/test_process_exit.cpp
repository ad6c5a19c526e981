// sim/process_exit.h: an object left to the process exit stays whole and in use until
// the exit, which never destroys it (LeakSanitizer's exit check sees it reachable).
#include <memory>

#include <gtest/gtest.h>

#include "sim/process_exit.h"

namespace {

bool destroyed = false;

struct Tracked {
  int value = 7;
  ~Tracked() { destroyed = true; }
};

TEST(LeaveToProcessExit, KeepsTheObjectWithoutDestroyingIt) {
  auto object = std::make_unique<Tracked>();
  const Tracked* address = object.get();
  Tracked& kept = fabricsim::sim::leave_to_process_exit(std::move(object));
  EXPECT_EQ(&kept, address);
  EXPECT_EQ(kept.value, 7);
  EXPECT_FALSE(destroyed);
}

}  // namespace
