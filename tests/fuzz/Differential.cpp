#include "Differential.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>

namespace gc::fuzz {

namespace {

std::string str(std::string_view v) {
  return std::string(v);
}

const char* outcomeName(OracleClient::Outcome o) {
  switch (o) {
  case OracleClient::Outcome::Accepted:
    return "accepted";
  case OracleClient::Outcome::Refused:
    return "refused";
  case OracleClient::Outcome::WroteOutside:
    return "wrote outside its surface";
  case OracleClient::Outcome::Crashed:
    return "crashed";
  case OracleClient::Outcome::Hung:
    return "hung";
  }
  return "?";
}

std::string jsonEscaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}

} // namespace

Differential::Differential(const char* codec, size_t comparedBytes) : m_codec(codec), m_bytes(comparedBytes) {
  OracleClient::instance(); // made first, so it outlives this (the report reads it)
  const char* e = std::getenv("GC_DIFF_EXPLORE");
  m_explore = e && std::strcmp(e, "1") == 0;
}

Differential::~Differential() {
  report();
}

const char* Differential::freerdpLenient(std::string_view, std::string_view, const Message&) const {
  return nullptr;
}
const char* Differential::freerdpStrict(const Message&, int32_t) const {
  return nullptr;
}
const char* Differential::pixelsExplained(const Message&, uint32_t, uint32_t, const uint8_t*,
                                          const uint8_t*) const {
  return nullptr;
}

void Differential::begin(const oracle::Begin& begin, std::span<const uint8_t> input) {
  ++m_inputs;
  m_begin = begin;
  m_input.assign(input.begin(), input.end());
  if (!m_ours || m_ours->pixels().width != begin.side)
    m_ours = std::make_unique<GuardedPixels>(begin.side, begin.side, 0);
  oracle::fill(m_ours->bits(), m_ours->stride(), begin.side, begin.fillSeed);
  OracleClient::instance().begin(begin, input);
}

void Differential::count(const std::string& cls) {
  ++m_classes[cls];
}

void Differential::finding(const std::string& what) {
  std::fprintf(stderr, "\n==differential %s: %s\n", m_codec.c_str(), what.c_str());
  std::fflush(stderr);
  std::abort();
}

// Surveying: the class is counted, and its first example kept for reading.
void Differential::explore(const std::string& cls) {
  const bool first = m_classes.find(cls) == m_classes.end();
  count(cls);
  const char* dir = std::getenv("GC_DIFF_EXAMPLES");
  if (!first || !dir || !*dir)
    return;
  mkdir(dir, 0700);
  std::string name = m_codec + "-";
  for (char c : cls)
    name += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  if (FILE* f = std::fopen((std::string(dir) + "/" + name.substr(0, 200)).c_str(), "wb")) {
    std::fwrite(m_input.data(), 1, m_input.size(), f);
    std::fclose(f);
  }
}

bool Differential::step(const Message& m, const front::Checked<front::Ok>& result) {
  ++m_messages;
  m_ours->requireGuardsIntact(); // the project's decoder wrote outside the surface: a finding
  const OracleClient::Result theirs = OracleClient::instance().decode(m.d, m.data, m_theirs);
  const bool oursOk = !front::isViolation(result);
  const auto* violation = std::get_if<front::Violation>(&result);

  switch (theirs.outcome) {
  case OracleClient::Outcome::WroteOutside:
  case OracleClient::Outcome::Crashed:
  case OracleClient::Outcome::Hung:
    count(std::string("FreeRDP fault: ") + outcomeName(theirs.outcome) +
          (oursOk ? " on a message ours accepted" : " on a message ours refused"));
    return false;
  case OracleClient::Outcome::Refused:
    if (!oursOk) {
      ++m_bothRefused;
      return false;
    }
    if (const char* cls = freerdpStrict(m, theirs.rc)) {
      count(cls);
      return false;
    }
    if (m_explore) {
      explore("UNEXPLAINED ours accepted, FreeRDP refused (rc " + std::to_string(theirs.rc) + ")");
      return false;
    }
    finding("message " + std::to_string(m.index) + " accepted here, refused by FreeRDP (rc " +
            std::to_string(theirs.rc) + ")");
  case OracleClient::Outcome::Accepted:
    break;
  }

  if (!oursOk) {
    if (const char* cls = freerdpLenient(violation->pdu, violation->rule, m)) {
      count(cls);
      return false;
    }
    const std::string rule = str(violation->pdu) + ": " + str(violation->rule);
    if (m_explore) {
      explore("UNEXPLAINED ours refused (" + rule + "), FreeRDP accepted");
      return false;
    }
    finding("message " + std::to_string(m.index) + " refused here (" + rule +
            ") but accepted by FreeRDP: ours too strict, or a leniency of FreeRDP not yet classified");
  }

  // Both accepted: the whole surface must agree (a decoder that writes outside the command's
  // rectangle shows there too).
  const uint32_t side = m_begin.side;
  const size_t bytes = compared(m);
  for (uint32_t y = 0; y < side; ++y) {
    const uint8_t* oursRow = m_ours->bits() + size_t(y) * m_ours->stride();
    const uint8_t* theirsRow = m_theirs.data() + size_t(y) * side * 4;
    if (std::memcmp(oursRow, theirsRow, size_t(side) * 4) == 0)
      continue;
    for (uint32_t x = 0; x < side; ++x) {
      const uint8_t* o = oursRow + size_t(x) * 4;
      const uint8_t* t = theirsRow + size_t(x) * 4;
      if (std::memcmp(o, t, bytes) == 0)
        continue;
      if (const char* cls = pixelsExplained(m, x, y, o, t)) {
        count(cls);
        return false;
      }
      if (m_explore) {
        explore("UNEXPLAINED pixels differ");
        return false;
      }
      char what[200];
      std::snprintf(
          what, sizeof what,
          "message %zu: both accepted, pixel (%u,%u) differs: ours %02x %02x %02x %02x, FreeRDP %02x "
          "%02x %02x %02x (rectangle %u,%u %ux%u)",
          m.index, x, y, o[0], o[1], o[2], o[3], t[0], t[1], t[2], t[3], m.d.x, m.d.y, m.d.w, m.d.h);
      finding(what);
    }
  }
  ++m_equal;
  return true;
}

void Differential::report() const {
  std::fprintf(
      stderr,
      "differential %s: %llu inputs, %llu messages, %llu both accepted and equal, %llu both refused, "
      "%llu FreeRDP restarts\n",
      m_codec.c_str(), (unsigned long long)m_inputs, (unsigned long long)m_messages,
      (unsigned long long)m_equal, (unsigned long long)m_bothRefused,
      (unsigned long long)OracleClient::instance().faults());
  for (const auto& [cls, n] : m_classes)
    std::fprintf(stderr, "differential %s:   %8llu  %s\n", m_codec.c_str(), (unsigned long long)n,
                 cls.c_str());
  const char* path = std::getenv("GC_DIFF_REPORT");
  if (!path || !*path)
    return;
  FILE* f = std::fopen(path, "w");
  if (!f)
    return;
  std::fprintf(f,
               "{\"codec\": \"%s\", \"inputs\": %llu, \"messages\": %llu, \"bothAcceptedEqual\": %llu, "
               "\"bothRefused\": %llu, \"freerdpRestarts\": %llu, \"classes\": {",
               m_codec.c_str(), (unsigned long long)m_inputs, (unsigned long long)m_messages,
               (unsigned long long)m_equal, (unsigned long long)m_bothRefused,
               (unsigned long long)OracleClient::instance().faults());
  bool first = true;
  for (const auto& [cls, n] : m_classes) {
    std::fprintf(f, "%s\"%s\": %llu", first ? "" : ", ", jsonEscaped(cls).c_str(), (unsigned long long)n);
    first = false;
  }
  std::fprintf(f, "}}\n");
  std::fclose(f);
}

} // namespace gc::fuzz
