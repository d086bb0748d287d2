// One sample of one device, as text or as a JSON object; and what is
// printed when the host revoked a device.
#pragma once

#include <ostream>
#include <string>
#include <string_view>

#include "common/json.h"
#include "sampler.h"

namespace kvmai::kvmaistat {

// "0000:01:00.0 mock_bw  interval 1.000 s (device clock)", then one line
// per PCIe stack and memory channel.
void print_text(std::ostream& out, std::string_view bdf, std::string_view unit, const Rates& rates);

// {"device", "unit", "time", "interval_s", "clock", "pcie": [...], "mem": [...]};
// a direction the device does not count has no key.  Each stack and
// channel says in "traffic" which transfers it counts ("sees") and which
// pass it by ("misses").
Json rates_json(std::string_view bdf, std::string_view unit, const Rates& rates);

// {"device", "unit", "state": "revoked"}
Json revoked_json(std::string_view bdf, std::string_view unit);

// One object: a single line, or indented (-p).
void print_json(std::ostream& out, const Json& object, bool pretty);

// "0000:01:00.0: unit mock_bw was revoked by the host"
std::string revoked_message(std::string_view bdf, std::string_view unit);

}  // namespace kvmai::kvmaistat
