#include "session/SecretJson.h"

#include "common/StrictJson.h"
#include "privacy/SecureZero.h"

namespace gc {
namespace {

struct Cursor {
  const char* p;
  const char* end;

  void skipWs() {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
      ++p;
  }
  bool take(char c) {
    skipWs();
    if (p < end && *p == c) {
      ++p;
      return true;
    }
    return false;
  }
};

bool read4(Cursor& c, unsigned& out) {
  if (c.end - c.p < 4)
    return false;
  out = 0;
  for (int i = 0; i < 4; ++i) {
    const int v = StrictJson::hexDigit(static_cast<unsigned char>(c.p[i]));
    if (v < 0)
      return false;
    out = out * 16 + unsigned(v);
  }
  c.p += 4;
  return true;
}

bool appendUtf8(SecureBuffer& out, unsigned cp) {
  char b[4];
  int n = 0;
  if (cp < 0x80) {
    b[n++] = char(cp);
  } else if (cp < 0x800) {
    b[n++] = char(0xC0 | (cp >> 6));
    b[n++] = char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    b[n++] = char(0xE0 | (cp >> 12));
    b[n++] = char(0x80 | ((cp >> 6) & 0x3F));
    b[n++] = char(0x80 | (cp & 0x3F));
  } else {
    b[n++] = char(0xF0 | (cp >> 18));
    b[n++] = char(0x80 | ((cp >> 12) & 0x3F));
    b[n++] = char(0x80 | ((cp >> 6) & 0x3F));
    b[n++] = char(0x80 | (cp & 0x3F));
  }
  const bool ok = out.append(QByteArrayView(b, n));
  secureZero(b, sizeof b);
  return ok;
}

// Decodes the JSON string at the cursor (opening quote included) into `out`.
bool decodeString(Cursor& c, SecureBuffer& out) {
  if (!c.take('"'))
    return false;
  while (c.p < c.end) {
    const char ch = *c.p++;
    if (ch == '"')
      return true;
    if (ch != '\\') {
      if (!out.append(ch))
        return false;
      continue;
    }
    if (c.p >= c.end)
      return false;
    const char esc = *c.p++;
    if (esc == 'u') {
      unsigned cp = 0;
      if (!read4(c, cp))
        return false;
      if (cp >= 0xD800 && cp <= 0xDBFF) { // a high surrogate must be followed by a low one
        unsigned low = 0;
        if (c.end - c.p < 6 || c.p[0] != '\\' || c.p[1] != 'u')
          return false;
        c.p += 2;
        if (!read4(c, low) || low < 0xDC00 || low > 0xDFFF)
          return false;
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
      } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
        return false;
      }
      if (!appendUtf8(out, cp))
        return false;
      continue;
    }
    const std::optional<char> plain = StrictJson::simpleEscape(esc);
    if (!plain)
      return false;
    if (!out.append(*plain))
      return false;
  }
  return false;
}

} // namespace

Outcome<SecretJson::Members> SecretJson::parseFlatStrings(QByteArrayView text, qsizetype maxBytes) {
  const QByteArray unowned = QByteArray::fromRawData(text.data(), text.size()); // no copy
  if (Status valid = StrictJson::validate(unowned, maxBytes, 1); !valid.ok())
    return Failure{valid.code(), valid.failure().message};

  const Failure malformed{Refusal::ProtocolMalformed, QStringLiteral("expected a flat object of strings")};
  Cursor c{text.data(), text.data() + text.size()};
  Members members;
  if (!c.take('{'))
    return malformed;
  if (c.take('}'))
    return members;
  do {
    Outcome<SecureBuffer> keyBuf = SecureBuffer::allocate(64);
    if (!keyBuf.ok())
      return keyBuf.failure();
    if (!decodeString(c, keyBuf.value()) || keyBuf.value().size() > 32 || !c.take(':'))
      return malformed;
    const QString key = QString::fromUtf8(keyBuf.value().view());
    c.skipWs();
    // A decoded value is never longer than its encoded form.
    Outcome<SecureBuffer> value = SecureBuffer::allocate(std::size_t(std::max<qsizetype>(1, c.end - c.p)));
    if (!value.ok())
      return value.failure();
    if (c.p >= c.end || *c.p != '"' || !decodeString(c, value.value()))
      return malformed;
    members.emplace(key, std::move(value).value());
  } while (c.take(','));
  if (!c.take('}'))
    return malformed;
  return members;
}

} // namespace gc
