#include "modules/dav_ext/propfind_body.h"

#include <libxml/parser.h>

#include <cstring>
#include <mutex>

namespace torii::dav_ext {

namespace {

enum Element : uint8_t { propfind = 1, prop = 2, propname = 4, allprop = 8 };

struct Reading {
  uint8_t open = 0;  // Element bits, each flipped by its start and its end tag
  uint8_t props = 0;
};

bool named(const xmlChar* name, const char* what) { return std::strcmp(reinterpret_cast<const char*>(name), what) == 0; }

// The module toggles a bit at both tags of an element rather than
// counting depth; the same, so that odd nestings read as they do there.
void flip(Reading& r, const xmlChar* name) {
  if (named(name, "propfind")) r.open ^= propfind;
  if (named(name, "prop")) r.open ^= prop;
  if (named(name, "propname")) r.open ^= propname;
  if (named(name, "allprop")) r.open ^= allprop;
}

void on_start(void* data, const xmlChar* localname, const xmlChar*, const xmlChar*, int, const xmlChar**, int, int,
              const xmlChar**) {
  flip(*static_cast<Reading*>(data), localname);
}

void on_end(void* data, const xmlChar* localname, const xmlChar*, const xmlChar*) {
  Reading& r = *static_cast<Reading*>(data);
  if (r.open & propfind) {
    if (r.open & prop) {
      static constexpr std::pair<const char*, uint8_t> kKnown[] = {
          {"displayname", displayname},     {"getcontentlength", getcontentlength},
          {"getlastmodified", getlastmodified}, {"resourcetype", resourcetype},
          {"lockdiscovery", lockdiscovery}, {"supportedlock", supportedlock},
      };
      for (const auto& [name, bit] : kKnown)
        if (named(localname, name)) r.props |= bit;
    }
    if (r.open & propname) r.props |= names_only;
    if (r.open & allprop) r.props = all_properties;
  }
  flip(r, localname);
}

// libxml2 reports errors through these; the caller logs its own line.
void quiet(void*, const char*, ...) {}
void quiet_structured(void*, xmlErrorPtr) {}

}  // namespace

std::optional<uint8_t> parse_propfind_body(std::string_view body) {
  if (body.empty()) return all_properties;
  static std::once_flag init;
  std::call_once(init, [] { xmlInitParser(); });
  xmlSAXHandler sax;
  std::memset(&sax, 0, sizeof sax);
  sax.initialized = XML_SAX2_MAGIC;
  sax.startElementNs = on_start;
  sax.endElementNs = on_end;
  sax.warning = quiet;
  sax.error = quiet;
  sax.serror = quiet_structured;
  Reading reading;
  xmlParserCtxtPtr ctx = xmlCreatePushParserCtxt(&sax, &reading, nullptr, 0, nullptr);
  if (ctx == nullptr) return std::nullopt;
  // No network, ever (no external entity or DTD is loaded without
  // options asking for it; libxml2 bounds internal entity expansion).
  xmlCtxtUseOptions(ctx, XML_PARSE_NONET);
  bool ok = true;
  // libxml2 takes an int length: a body past that (beyond any sane
  // client_max_body_size) goes in pieces.
  constexpr size_t kPiece = 1 << 30;
  while (ok && body.size() > kPiece) {
    ok = xmlParseChunk(ctx, body.data(), int(kPiece), 0) == 0;
    body.remove_prefix(kPiece);
  }
  if (ok) ok = xmlParseChunk(ctx, body.data(), int(body.size()), 1) == 0;
  // A DOCTYPE that declares entities makes libxml2 build a document to
  // hold them even in SAX mode (its expat compatibility); it is ours to free.
  if (ctx->myDoc != nullptr) xmlFreeDoc(ctx->myDoc);
  xmlFreeParserCtxt(ctx);
  if (!ok) return std::nullopt;
  return reading.props;
}

}  // namespace torii::dav_ext
