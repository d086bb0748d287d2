// kvmaistat: PCIe and memory bandwidth in a KVM guest, from the counter
// pages of the kvmai counters devices the host passed to it.
#include <iostream>

#include "run.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  return kvmai::kvmaistat::run(args, std::cout, std::cerr);
}
