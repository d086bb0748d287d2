// XML documents for the formats other programs read (libvirt's domain XML,
// NCCL's topology file), built and parsed with libxml2.
#pragma once

#include <libxml/tree.h>

#include <memory>
#include <string>
#include <string_view>

namespace kvmaictl::xml {

struct DocFree {
  void operator()(xmlDoc* d) const { xmlFreeDoc(d); }
};
using DocPtr = std::unique_ptr<xmlDoc, DocFree>;

// An element of a Doc; the document owns it, so it is a plain handle.
class Element {
 public:
  explicit Element(xmlNode* node) : node_(node) {}

  // A new child element, last among its siblings.
  Element child(std::string_view name) const;
  // A child element holding text only: <name>text</name>.
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

  xmlNode* get() const { return node_; }

 private:
  xmlNode* node_;
};

class Doc {
 public:
  // An empty document whose root element is @root.
  explicit Doc(std::string_view root);

  Element root() const { return Element(xmlDocGetRootElement(doc_.get())); }
  // Indented, with or without the <?xml ...?> declaration.
  std::string str(bool declaration = true) const;

  // Parses @text; throws std::runtime_error naming what is wrong.
  static Doc parse(std::string_view text);
  xmlDoc* get() const { return doc_.get(); }

 private:
  explicit Doc(DocPtr doc) : doc_(std::move(doc)) {}
  DocPtr doc_;
};

// An attribute's value, or "" when absent.
std::string attr(const xmlNode* node, const char* name);

}  // namespace kvmaictl::xml
