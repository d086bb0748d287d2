// kvmaictl: operator CLI for kvm-ai.
#include <iostream>

#include "cli/cli.h"
#include "client/libnl.h"

int main(int argc, char** argv) {
  const kvmaictl::Args args(argv + 1, argv + argc);
  return kvmaictl::run(args, std::cout, std::cerr, kvmaictl::connect_libnl);
}
