// Tests read kvmaictl's XML back with libxml2, a parser independent of the
// pugixml that wrote it (xml/xml.h).  Test-only: kvmaictl itself does not
// link libxml2.
#pragma once

#include <libxml/parser.h>
#include <libxml/tree.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kvmai::kvmaictl::testing::lx {

// libxml2 speaks unsigned char; names and values here are UTF-8 already.
inline const xmlChar* x(const std::string& s) {
  return reinterpret_cast<const xmlChar*>(s.c_str());
}

struct XmlFree {
  void operator()(xmlChar* p) const { xmlFree(p); }
};
struct DocFree {
  void operator()(xmlDoc* d) const { xmlFreeDoc(d); }
};

// An element of a parsed Doc, to add to it (e.g. a bad controller).
class Element {
 public:
  explicit Element(xmlNode* node) : node_(node) {}
  Element child(std::string_view name) const {
    return Element(xmlNewChild(node_, nullptr, x(std::string(name)), nullptr));
  }
  // xmlNewTextChild escapes the text; xmlNewChild would take it as markup.
  Element text_child(std::string_view name, std::string_view text) const {
    return Element(xmlNewTextChild(node_, nullptr, x(std::string(name)), x(std::string(text))));
  }
  const Element& attr(std::string_view name, std::string_view value) const {
    xmlSetProp(node_, x(std::string(name)), x(std::string(value)));
    return *this;
  }
  const Element& attr(std::string_view name, long value) const {
    return attr(name, std::to_string(value));
  }
  xmlNode* get() const { return node_; }

 private:
  xmlNode* node_;
};

class Doc {
 public:
  // Throws std::runtime_error naming what is wrong.
  static Doc parse(std::string_view text) {
    std::unique_ptr<xmlDoc, DocFree> d(
        xmlReadMemory(text.data(), static_cast<int>(text.size()), "input.xml", nullptr,
                      XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING));
    if (!d) {
      const xmlError* e = xmlGetLastError();
      throw std::runtime_error(
          std::string("not well-formed XML") +
          (e != nullptr && e->message != nullptr ? ": " + std::string(e->message) : ""));
    }
    return Doc(std::move(d));
  }
  Element root() const { return Element(xmlDocGetRootElement(doc_.get())); }
  xmlDoc* get() const { return doc_.get(); }
  std::string str() const {
    xmlChar* mem = nullptr;
    int len = 0;
    xmlDocDumpFormatMemoryEnc(doc_.get(), &mem, &len, "UTF-8", 1);
    const std::unique_ptr<xmlChar, XmlFree> owned(mem);
    return {reinterpret_cast<const char*>(mem), static_cast<std::size_t>(len)};
  }

 private:
  explicit Doc(std::unique_ptr<xmlDoc, DocFree> d) : doc_(std::move(d)) {}
  std::unique_ptr<xmlDoc, DocFree> doc_;
};

// An attribute's value, or "" when absent.
inline std::string attr(const xmlNode* node, const char* name) {
  const std::unique_ptr<xmlChar, XmlFree> v(xmlGetProp(node, x(name)));
  return v ? reinterpret_cast<const char*>(v.get()) : "";
}

}  // namespace kvmai::kvmaictl::testing::lx
