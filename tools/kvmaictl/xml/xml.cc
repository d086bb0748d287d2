#include "xml/xml.h"

#include <sstream>
#include <stdexcept>

namespace kvmai::kvmaictl::xml {

Element Element::child(std::string_view name) const {
  return Element(node_.append_child(std::string(name).c_str()));
}

Element Element::text_child(std::string_view name, std::string_view text) const {
  const Element e = child(name);
  e.node_.text().set(std::string(text).c_str());
  return e;
}

const Element& Element::attr(std::string_view name, std::string_view value) const {
  const std::string n(name);
  pugi::xml_attribute a = node_.attribute(n.c_str());
  if (a.empty()) {
    a = node_.append_attribute(n.c_str());
  }
  a.set_value(std::string(value).c_str());
  return *this;
}

const Element& Element::attr(std::string_view name, long value) const {
  return attr(name, std::to_string(value));
}

const Element& Element::comment(std::string_view text) const {
  node_.append_child(pugi::node_comment).set_value(std::string(text).c_str());
  return *this;
}

const Element& Element::declare_ns(std::string_view prefix, std::string_view href) const {
  return attr("xmlns:" + std::string(prefix), href);
}

Element Element::ns_child(std::string_view prefix, std::string_view name) const {
  const std::string decl = "xmlns:" + std::string(prefix);
  for (pugi::xml_node n = node_; !n.empty(); n = n.parent()) {
    if (!n.attribute(decl.c_str()).empty()) {
      return child(std::string(prefix) + ":" + std::string(name));
    }
  }
  throw std::logic_error("no XML namespace declared under \"" + std::string(prefix) + "\"");
}

Doc::Doc(std::string_view root) : doc_(std::make_unique<pugi::xml_document>()) {
  doc_->append_child(std::string(root).c_str());
}

std::string Doc::str(bool declaration) const {
  std::ostringstream out;
  unsigned flags = pugi::format_indent;
  if (!declaration) {
    flags |= pugi::format_no_declaration;
  }
  doc_->save(out, "  ", flags, pugi::encoding_utf8);
  return out.str();
}

}  // namespace kvmai::kvmaictl::xml
