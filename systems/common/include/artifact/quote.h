// User input in a message, shown safely: a field or a line of an input file, an option's value, a
// path. Each byte outside printable ASCII, and the quote and the backslash, is escaped (\n, \r, \t,
// \\, \', else \xHH, as Python's repr shows them: core/ssdartifact/quoting.py). Unescaped, a NUL
// would end the message early (what() is a C string) and a control character could forge a line
// of it; a field of 50 MB would be echoed whole, so excerpt() shows at most kExcerptBytes of it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace artifact {

inline constexpr size_t kExcerptBytes = 60;  // enough to recognize a value, short enough for one line

// `text` with every byte that could cut or forge a message escaped (a path, shown whole).
inline std::string escaped(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (const unsigned char c : text) {
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\\': out += "\\\\"; break;
      case '\'': out += "\\'"; break;
      default:
        if (c >= 0x20 && c < 0x7f) {
          out += static_cast<char>(c);
        } else {
          out += "\\x";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        }
    }
  }
  return out;
}

// At most `limit` bytes of `text`, escaped, in single quotes (named so that std::quoted, found by
// argument lookup, is never called instead), then its length when cut: '0000'... (52428800 bytes).
inline std::string excerpt(std::string_view text, size_t limit = kExcerptBytes) {
  std::string out(1, '\'');  // appended to, not `"'" + ...`: GCC 12 warns falsely on that (-Wrestrict)
  out += escaped(text.substr(0, limit));
  out += '\'';
  if (text.size() > limit) {
    out += "... (";
    out += std::to_string(text.size());
    out += " bytes)";
  }
  return out;
}

}  // namespace artifact
