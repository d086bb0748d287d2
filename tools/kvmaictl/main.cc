// kvmaictl: operator CLI for kvm-ai.
#include <iostream>

#include "cli/cli.h"
#include "client/libnl.h"

int main(int argc, char** argv) {
  const kvmai::kvmaictl::Args args(argv + 1, argv + argc);
  return kvmai::kvmaictl::run(args, std::cout, std::cerr, kvmai::kvmaictl::connect_libnl);
}
