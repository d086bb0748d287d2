#include "xml/xml.h"

#include <libxml/parser.h>
#include <libxml/xmlsave.h>

#include <stdexcept>

namespace kvmaictl::xml {
namespace {

// libxml2 speaks unsigned char; names and values here are UTF-8 already.
const xmlChar* x(const std::string& s) {
  return reinterpret_cast<const xmlChar*>(s.c_str());
}

struct XmlFree {
  void operator()(xmlChar* p) const { xmlFree(p); }
};

}  // namespace

Element Element::child(std::string_view name) const {
  return Element(xmlNewChild(node_, nullptr, x(std::string(name)), nullptr));
}

Element Element::text_child(std::string_view name, std::string_view text) const {
  // xmlNewTextChild escapes the text; xmlNewChild would take it as markup.
  return Element(xmlNewTextChild(node_, nullptr, x(std::string(name)), x(std::string(text))));
}

const Element& Element::attr(std::string_view name, std::string_view value) const {
  xmlSetProp(node_, x(std::string(name)), x(std::string(value)));
  return *this;
}

const Element& Element::attr(std::string_view name, long value) const {
  return attr(name, std::to_string(value));
}

const Element& Element::comment(std::string_view text) const {
  xmlAddChild(node_, xmlNewDocComment(node_->doc, x(std::string(text))));
  return *this;
}

const Element& Element::declare_ns(std::string_view prefix, std::string_view href) const {
  xmlNewNs(node_, x(std::string(href)), x(std::string(prefix)));
  return *this;
}

Element Element::ns_child(std::string_view prefix, std::string_view name) const {
  xmlNs* ns = xmlSearchNs(node_->doc, node_, x(std::string(prefix)));
  if (ns == nullptr) {
    throw std::logic_error("no XML namespace declared under \"" + std::string(prefix) + "\"");
  }
  return Element(xmlNewChild(node_, ns, x(std::string(name)), nullptr));
}

Doc::Doc(std::string_view root) : doc_(xmlNewDoc(x("1.0"))) {
  xmlDocSetRootElement(doc_.get(),
                       xmlNewDocNode(doc_.get(), nullptr, x(std::string(root)), nullptr));
}

std::string Doc::str(bool declaration) const {
  if (declaration) {
    xmlChar* mem = nullptr;
    int len = 0;
    xmlDocDumpFormatMemoryEnc(doc_.get(), &mem, &len, "UTF-8", 1);
    const std::unique_ptr<xmlChar, XmlFree> owned(mem);
    return {reinterpret_cast<const char*>(mem), static_cast<std::size_t>(len)};
  }
  const std::unique_ptr<xmlBuffer, decltype(&xmlBufferFree)> buf(xmlBufferCreate(), xmlBufferFree);
  xmlNodeDump(buf.get(), doc_.get(), xmlDocGetRootElement(doc_.get()), 0, 1);
  return std::string(reinterpret_cast<const char*>(xmlBufferContent(buf.get()))) + "\n";
}

Doc Doc::parse(std::string_view text) {
  DocPtr d(xmlReadMemory(text.data(), static_cast<int>(text.size()), "input.xml", nullptr,
                         XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING));
  if (!d) {
    const xmlError* e = xmlGetLastError();
    throw std::runtime_error(
        std::string("not well-formed XML") +
        (e != nullptr && e->message != nullptr ? ": " + std::string(e->message) : ""));
  }
  return Doc(std::move(d));
}

std::string attr(const xmlNode* node, const char* name) {
  const std::unique_ptr<xmlChar, XmlFree> v(xmlGetProp(node, x(name)));
  return v ? reinterpret_cast<const char*>(v.get()) : "";
}

}  // namespace kvmaictl::xml
