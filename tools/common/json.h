// JSON as the tools print it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace kvmai {

// Insertion-ordered, so output follows the order fields are printed in.
using Json = nlohmann::ordered_json;

// `doc` as JSON text (`indent` as Json::dump's). ASCII only: a string that
// came from elsewhere (a process's command name, a unit name a device
// reports) may hold control bytes or invalid UTF-8; the first are
// \u-escaped, the second replaced (U+FFFD) instead of failing the whole
// output.
std::string json_text(const Json& doc, int indent = -1);

}  // namespace kvmai
