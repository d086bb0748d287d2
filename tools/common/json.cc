#include "common/json.h"

namespace kvmai {

std::string json_text(const Json& doc, int indent) {
  return doc.dump(indent, ' ', true, Json::error_handler_t::replace);
}

}  // namespace kvmai
