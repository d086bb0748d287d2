// Words of `kvmaictl vm plan` shared by the unit tests of plans.
#pragma once

#include <string>

#include "cli/grammar.h"

namespace kvmai::kvmaictl::testing {

// The first @n GPUs of hgx-vm, two to a switch (gpu0/gpu1 below sw0, ...);
// all eight take the baseboard's NVSwitches along.
inline Args hgx_gpus(int n) {
  Args a;
  for (int i = 0; i < n; ++i) {
    a.push_back("gpu" + std::to_string(i));
  }
  if (n == 8) {
    a.insert(a.end(), {"nvswitch0", "nvswitch1", "nvswitch2", "nvswitch3"});
  }
  return a;
}

// @a, then @b.
inline Args operator+(Args a, const Args& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace kvmai::kvmaictl::testing
