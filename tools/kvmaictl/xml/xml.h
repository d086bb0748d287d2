// XML documents for the formats other programs read (libvirt's domain XML,
// NCCL's topology file), built with pugixml: a small library with no
// dependencies of its own, so kvmaictl stays small enough to copy into
// guests (libxml2 would bring ICU's 30 MB of data along).
#pragma once

#include <memory>
#include <pugixml.hpp>
#include <string>
#include <string_view>

namespace kvmai::kvmaictl::xml {

// An element of a Doc; the document owns it, so it is a plain handle.
class Element {
 public:
  explicit Element(pugi::xml_node node) : node_(node) {}

  // A new child element, last among its siblings.
  Element child(std::string_view name) const;
  // A child element holding text only: <name>text</name> (escaped).
  Element text_child(std::string_view name, std::string_view text) const;
  const Element& attr(std::string_view name, std::string_view value) const;
  const Element& attr(std::string_view name, long value) const;
  const Element& comment(std::string_view text) const;
  // Declares namespace @href under @prefix here (xmlns:prefix="href"),
  // for ns_child() on this element and its descendants.
  const Element& declare_ns(std::string_view prefix, std::string_view href) const;
  // A new child element in the namespace declared under @prefix on this
  // element or an ancestor; throws std::logic_error when none is.
  Element ns_child(std::string_view prefix, std::string_view name) const;

 private:
  // A handle, like a pointer: adding to the element does not change it.
  mutable pugi::xml_node node_;
};

class Doc {
 public:
  // An empty document whose root element is @root.
  explicit Doc(std::string_view root);

  Element root() const { return Element(doc_->document_element()); }
  // Indented by two spaces, with or without the <?xml ...?> declaration.
  std::string str(bool declaration = true) const;

 private:
  // pugi::xml_document cannot move; the pointer lets a Doc be returned.
  std::unique_ptr<pugi::xml_document> doc_;
};

}  // namespace kvmai::kvmaictl::xml
