#include "common/StrictJson.h"

#include <QJsonDocument>
#include <QJsonParseError>

#include <string>
#include <unordered_set>
#include <vector>

namespace gc {

namespace {

// Scans one JSON text without recursion: nesting is an explicit stack bounded by maxDepth,
// so hostile input cannot exhaust the call stack. Each open object keeps the set of its
// decoded keys ("a" and "\u0061" are the same key).
class Scanner {
public:
  Scanner(const QByteArray& bytes, int maxDepth)
      : m_data(reinterpret_cast<const unsigned char*>(bytes.constData())), m_size(bytes.size()),
        m_maxDepth(maxDepth) {}

  Status run();

private:
  struct Frame {
    bool isObject = false;
    std::unordered_set<std::string> keys;
  };
  enum class Next { Value, Key, AfterValue };

  bool atEnd() const { return m_pos >= m_size; }
  unsigned char peek() const { return m_data[m_pos]; }
  void skipWhitespace();
  Status fail(const char* what) const;
  Status open(bool isObject);
  Status scanString(std::string* decoded);
  Status scanEscape(std::string* decoded);
  Status scanUtf8();
  Status scanNumber();
  Status scanLiteral(const char* word);
  Status scanValue(Next* next);
  Status scanKey();
  Status scanAfterValue(Next* next, bool* done);

  const unsigned char* m_data;
  qsizetype m_size;
  qsizetype m_pos = 0;
  int m_maxDepth;
  // Frames are reused (not popped) so each object's key set keeps its buckets.
  std::vector<Frame> m_stack;
  int m_depth = 0;
};

Status Scanner::fail(const char* what) const {
  return Status(Refusal::ProtocolMalformed,
                QStringLiteral("%1 at byte %2").arg(QLatin1StringView(what)).arg(m_pos));
}

void Scanner::skipWhitespace() {
  while (!atEnd()) {
    const unsigned char c = peek();
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
      return;
    ++m_pos;
  }
}

Status Scanner::open(bool isObject) {
  if (m_depth >= m_maxDepth)
    return fail("nesting too deep");
  if (static_cast<int>(m_stack.size()) <= m_depth)
    m_stack.emplace_back();
  Frame& frame = m_stack[static_cast<size_t>(m_depth)];
  frame.isObject = isObject;
  frame.keys.clear();
  ++m_depth;
  ++m_pos;
  return success();
}

Status Scanner::run() {
  if (m_maxDepth < 1)
    return Status(Refusal::ProtocolMalformed, QStringLiteral("maximum depth must be at least 1"));
  skipWhitespace();
  if (atEnd())
    return fail("empty document");
  if (peek() != '{')
    return fail("top level is not an object");
  Next next = Next::Value;
  bool done = false;
  while (!done) {
    Status step = success();
    switch (next) {
    case Next::Value:
      step = scanValue(&next);
      break;
    case Next::Key:
      step = scanKey();
      next = Next::Value;
      break;
    case Next::AfterValue:
      step = scanAfterValue(&next, &done);
      break;
    }
    if (!step)
      return step;
  }
  skipWhitespace();
  if (!atEnd())
    return fail("trailing bytes after the object");
  return success();
}

Status Scanner::scanValue(Next* next) {
  skipWhitespace();
  if (atEnd())
    return fail("truncated: expected a value");
  const unsigned char c = peek();
  switch (c) {
  case '{': {
    Status s = open(true);
    if (!s)
      return s;
    skipWhitespace();
    if (!atEnd() && peek() == '}') {
      ++m_pos;
      --m_depth;
      *next = Next::AfterValue;
    } else {
      *next = Next::Key;
    }
    return success();
  }
  case '[': {
    Status s = open(false);
    if (!s)
      return s;
    skipWhitespace();
    if (!atEnd() && peek() == ']') {
      ++m_pos;
      --m_depth;
      *next = Next::AfterValue;
    } else {
      *next = Next::Value;
    }
    return success();
  }
  case '"':
    *next = Next::AfterValue;
    return scanString(nullptr);
  case 't':
    *next = Next::AfterValue;
    return scanLiteral("true");
  case 'f':
    *next = Next::AfterValue;
    return scanLiteral("false");
  case 'n':
    *next = Next::AfterValue;
    return scanLiteral("null");
  default:
    if (c == '-' || (c >= '0' && c <= '9')) {
      *next = Next::AfterValue;
      return scanNumber();
    }
    return fail("expected a value");
  }
}

Status Scanner::scanKey() {
  skipWhitespace();
  if (atEnd())
    return fail("truncated: expected a key");
  if (peek() != '"')
    return fail("expected a string key");
  const qsizetype keyStart = m_pos;
  std::string key;
  Status s = scanString(&key);
  if (!s)
    return s;
  Frame& frame = m_stack[static_cast<size_t>(m_depth - 1)];
  if (!frame.keys.insert(std::move(key)).second) {
    m_pos = keyStart;
    return fail("duplicate key");
  }
  skipWhitespace();
  if (atEnd())
    return fail("truncated: expected ':'");
  if (peek() != ':')
    return fail("expected ':'");
  ++m_pos;
  return success();
}

Status Scanner::scanAfterValue(Next* next, bool* done) {
  if (m_depth == 0) {
    *done = true;
    return success();
  }
  skipWhitespace();
  if (atEnd())
    return fail("truncated: unclosed object or array");
  const bool inObject = m_stack[static_cast<size_t>(m_depth - 1)].isObject;
  const unsigned char c = peek();
  if (c == ',') {
    ++m_pos;
    *next = inObject ? Next::Key : Next::Value;
    return success();
  }
  if ((inObject && c == '}') || (!inObject && c == ']')) {
    ++m_pos;
    --m_depth;
    *next = Next::AfterValue;
    return success();
  }
  return fail(inObject ? "expected ',' or '}'" : "expected ',' or ']'");
}

Status Scanner::scanLiteral(const char* word) {
  for (const char* w = word; *w; ++w, ++m_pos) {
    if (atEnd() || peek() != static_cast<unsigned char>(*w))
      return fail("invalid literal");
  }
  return success();
}

// RFC 8259 number grammar; NaN, Infinity, leading '+', leading zeros, bare '.', hex all fail.
Status Scanner::scanNumber() {
  auto digits = [this] {
    qsizetype n = 0;
    while (!atEnd() && peek() >= '0' && peek() <= '9') {
      ++m_pos;
      ++n;
    }
    return n;
  };
  if (peek() == '-')
    ++m_pos;
  if (atEnd())
    return fail("truncated number");
  if (peek() == '0') {
    ++m_pos;
  } else if (digits() == 0) {
    return fail("invalid number");
  }
  if (!atEnd() && peek() == '.') {
    ++m_pos;
    if (digits() == 0)
      return fail("invalid number: digits expected after '.'");
  }
  if (!atEnd() && (peek() == 'e' || peek() == 'E')) {
    ++m_pos;
    if (!atEnd() && (peek() == '+' || peek() == '-'))
      ++m_pos;
    if (digits() == 0)
      return fail("invalid number: digits expected in exponent");
  }
  return success();
}

void appendUtf8(std::string* out, char32_t cp) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

Status Scanner::scanString(std::string* decoded) {
  ++m_pos; // opening quote
  for (;;) {
    if (atEnd())
      return fail("truncated string");
    const unsigned char c = peek();
    if (c == '"') {
      ++m_pos;
      return success();
    }
    if (c == '\\') {
      Status s = scanEscape(decoded);
      if (!s)
        return s;
      continue;
    }
    if (c < 0x20)
      return fail("unescaped control character in string");
    if (c < 0x80) {
      if (decoded)
        decoded->push_back(static_cast<char>(c));
      ++m_pos;
      continue;
    }
    const qsizetype start = m_pos;
    Status s = scanUtf8();
    if (!s)
      return s;
    if (decoded)
      decoded->append(reinterpret_cast<const char*>(m_data + start), static_cast<size_t>(m_pos - start));
  }
}

Status Scanner::scanEscape(std::string* decoded) {
  ++m_pos; // backslash
  if (atEnd())
    return fail("truncated escape");
  const unsigned char e = peek();
  const std::optional<char> simple = StrictJson::simpleEscape(static_cast<char>(e));
  if (!simple && e != 'u')
    return fail("invalid escape");
  const char plain = simple.value_or(0);
  ++m_pos;
  if (e != 'u') {
    if (decoded)
      decoded->push_back(plain);
    return success();
  }
  auto hex4 = [this](char32_t* out) {
    if (m_size - m_pos < 4)
      return false;
    char32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const int h = StrictJson::hexDigit(m_data[m_pos + i]);
      if (h < 0)
        return false;
      v = (v << 4) | static_cast<char32_t>(h);
    }
    m_pos += 4;
    *out = v;
    return true;
  };
  char32_t cp = 0;
  if (!hex4(&cp))
    return fail("invalid \\u escape");
  if (cp >= 0xDC00 && cp <= 0xDFFF)
    return fail("lone low surrogate escape");
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    char32_t low = 0;
    if (m_size - m_pos < 2 || m_data[m_pos] != '\\' || m_data[m_pos + 1] != 'u')
      return fail("lone high surrogate escape");
    m_pos += 2;
    if (!hex4(&low) || low < 0xDC00 || low > 0xDFFF)
      return fail("lone high surrogate escape");
    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
  }
  if (decoded)
    appendUtf8(decoded, cp);
  return success();
}

// One multi-byte UTF-8 sequence (Unicode 15, table 3-7 "well-formed byte sequences"):
// the second byte's range excludes overlong forms (E0, F0), surrogates (ED) and code
// points above U+10FFFF (F4).
Status Scanner::scanUtf8() {
  const unsigned char lead = peek();
  int continuation = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    continuation = 1;
  } else if (lead == 0xE0) {
    continuation = 2;
    lo = 0xA0;
  } else if (lead == 0xED) {
    continuation = 2;
    hi = 0x9F;
  } else if (lead >= 0xE1 && lead <= 0xEF) {
    continuation = 2;
  } else if (lead == 0xF0) {
    continuation = 3;
    lo = 0x90;
  } else if (lead >= 0xF1 && lead <= 0xF3) {
    continuation = 3;
  } else if (lead == 0xF4) {
    continuation = 3;
    hi = 0x8F;
  } else {
    return fail("invalid UTF-8");
  }
  if (m_size - m_pos <= continuation)
    return fail("truncated UTF-8");
  const unsigned char second = m_data[m_pos + 1];
  if (second < lo || second > hi)
    return fail("invalid UTF-8");
  for (int i = 2; i <= continuation; ++i) {
    const unsigned char b = m_data[m_pos + i];
    if (b < 0x80 || b > 0xBF)
      return fail("invalid UTF-8");
  }
  m_pos += continuation + 1;
  return success();
}

} // namespace

Status StrictJson::validate(const QByteArray& bytes, qsizetype maxBytes, int maxDepth) {
  if (bytes.size() > maxBytes)
    return Status(Refusal::ProtocolOversize,
                  QStringLiteral("%1 bytes exceed the limit of %2").arg(bytes.size()).arg(maxBytes));
  return Scanner(bytes, maxDepth).run();
}

Outcome<QJsonObject> StrictJson::parseObject(const QByteArray& bytes, qsizetype maxBytes, int maxDepth) {
  Status valid = validate(bytes, maxBytes, maxDepth);
  if (!valid)
    return valid.failure();
  QJsonParseError error{};
  const QJsonDocument doc = QJsonDocument::fromJson(bytes, &error);
  // The scanner accepts a subset of what Qt accepts, so this is a backstop (e.g. a number
  // Qt cannot represent), not an expected path.
  if (error.error != QJsonParseError::NoError || !doc.isObject())
    return Failure{Refusal::ProtocolMalformed,
                   QStringLiteral("%1 at byte %2").arg(error.errorString()).arg(error.offset)};
  return doc.object();
}

int StrictJson::hexDigit(unsigned char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

std::optional<char> StrictJson::simpleEscape(char letter) {
  switch (letter) {
  case '"':
  case '\\':
  case '/':
    return letter;
  case 'b':
    return '\b';
  case 'f':
    return '\f';
  case 'n':
    return '\n';
  case 'r':
    return '\r';
  case 't':
    return '\t';
  default:
    return std::nullopt;
  }
}

} // namespace gc
