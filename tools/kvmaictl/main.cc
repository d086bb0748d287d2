// kvmaictl: operator CLI for kvm-ai.
#include <cstdlib>
#include <iostream>

#include "cli/run.h"
#include "client/libnl.h"
#include "commands/commands.h"

int main(int argc, char** argv) {
  using namespace kvmai::kvmaictl;
  const Args args(argv + 1, argv + argc);
  return run(command_table(), args, std::cout, std::cerr, connect_libnl, ::getenv);
}
