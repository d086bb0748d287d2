// P2P groups as the group, dev and monitor commands print them (the spec's
// `group` attribute set, client/kvmai.h).
#pragma once

#include <string_view>

#include "cli/print.h"
#include "client/kvmai.h"
#include "client/names.h"

namespace kvmai::kvmaictl {

// One group: a block of lines in text, an object under `key` in JSON (an
// array element when `key` is empty). -v adds ports' ACS target and
// capability to the text.
void print_group(Printer& out, const Group& group, bool verbose, std::string_view key = {});

// The group's name, state, mode, VM and members on one line (text only).
void print_group_summary(Printer& out, const Group& group);

}  // namespace kvmai::kvmaictl
