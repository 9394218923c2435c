// The byte layer of the trace reader: the decompressed JSON of a trace, inflated (ISA-L or zlib) on a
// thread of its own and handed to the parser in chunks through a bounded queue (inflating and parsing
// overlap on two cores; memory is the queue's few chunks, not the file), and a streaming JSON reader over
// it that calls the trace's handler back token by token.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "harness/driver/diagnose/diagnose_trace.h"

namespace gtb::diagnose {

// Where the decompressed JSON comes from, a chunk at a time.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // The next chunk (valid until the next call); empty at the end. Throws TraceError if the file is damaged,
  // after every byte read before the damage has been handed out.
  virtual std::string_view next() = 0;
};

// A file, gzipped or plain, inflated on its own thread ahead of the reader: by ISA-L where gtb was built
// with it and the file is gzipped, by zlib's gzread otherwise (which passes a plain file through).
std::unique_ptr<ByteSource> open_trace_file(const std::string& path);
// Text already in memory (tests): one chunk.
std::unique_ptr<ByteSource> text_source(std::string_view text);

// The text of a JSON number as a double, the way a JSON library that reads integers as 64-bit integers
// and other numbers with strtod gives it (a 64-bit integer cast to double; "-0" is 0): correctly rounded.
double json_number(std::string_view text);

// A streaming JSON reader (RFC 8259, UTF-8 checked) that calls a handler back for each token without
// building the document:
//   null(), boolean(b), number(text) (the numeral as written: the handler converts only the numbers it
//   keeps, with json_number), string(sv), key(sv), start_object(), end_object(), start_array(),
//   end_array(); each returns true to go on.
// A string_view is valid during its call only. The reader scans a window of the decompressed bytes
// (a chunk or two; a token is never split), so memory is bounded by the longest token, not the file.
// Throws TraceError naming the 0-based byte offset of the first malformed byte.
class JsonReader {
 public:
  explicit JsonReader(ByteSource& src);
  template <class H>
  std::uint64_t parse(H& h);  // the decompressed bytes read

 private:
  enum class Tok : std::uint8_t { string, number, literal_true, literal_false, literal_null, lbrace, rbrace, lbracket,
                                  rbracket, colon, comma, end };
  struct Token {
    Tok kind;
    std::string_view text;  // string (unescaped) or number
  };
  // The next token, whitespace skipped (inline: the parser's loop runs it for every token).
  Token next() {
    const char* b = buf_.data();
    std::size_t p = pos_;
    char c = b[p];
    while (c == ' ' || c == '\n' || c == '\r' || c == '\t') c = b[++p];
    if (p == len_) return at_window_end();
    token_start_ = p;
    switch (c) {
      case '"': return scan_string(p);
      case '{': pos_ = p + 1; return {Tok::lbrace, {}};
      case '}': pos_ = p + 1; return {Tok::rbrace, {}};
      case '[': pos_ = p + 1; return {Tok::lbracket, {}};
      case ']': pos_ = p + 1; return {Tok::rbracket, {}};
      case ':': pos_ = p + 1; return {Tok::colon, {}};
      case ',': pos_ = p + 1; return {Tok::comma, {}};
      case 't':
      case 'f':
      case 'n': return scan_literal(p);
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return scan_number(p);
        fail(p, "unexpected character");
    }
  }
  Token at_window_end();  // the window is read: the next chunk's first token, or the end
  bool refill(std::size_t keep_from);  // moves buf_[keep_from, len_) to the front, appends a chunk
  [[noreturn]] void fail(std::size_t at, const char* what) const;
  Token scan_string(std::size_t start);
  Token scan_number(std::size_t start);
  Token scan_literal(std::size_t start);
  Token scan_escaped(std::size_t start);  // a string with a backslash in it

  ByteSource& src_;
  std::string buf_;              // the window; buf_[len_] is a NUL sentinel, then padding for 16-byte loads
  std::size_t pos_ = 0, len_ = 0;
  std::size_t token_start_ = 0;  // where the last token began, in buf_
  std::uint64_t base_ = 0;       // offset of buf_[0] in the decompressed JSON
  bool eof_ = false;
  std::string scratch_;          // a string with escapes, unescaped
};

template <class H>
std::uint64_t JsonReader::parse(H& h) {
  std::string stack;  // the containers open around the current token: '{' or '['
  // A '}' or ']' that closes the innermost container: pops it, tells the handler, true.
  auto closes = [&](Tok kind) {
    const char open = kind == Tok::rbrace ? '{' : kind == Tok::rbracket ? '[' : '\0';
    if (open == '\0' || stack.empty() || stack.back() != open) return false;
    stack.pop_back();
    if (open == '{') h.end_object();
    else h.end_array();
    return true;
  };
  enum class Want : std::uint8_t { value, value_or_close, key_or_close, key, colon, comma_or_close };
  Want want = Want::value;
  for (;;) {
    const Token t = next();
    switch (want) {
      case Want::key_or_close:  // just after '{'
        if (t.kind == Tok::rbrace && closes(t.kind)) {
          want = Want::comma_or_close;
          break;
        }
        [[fallthrough]];
      case Want::key:
        if (t.kind != Tok::string) fail(token_start_, "an object key (a string) was expected");
        h.key(t.text);
        want = Want::colon;
        break;
      case Want::colon:
        if (t.kind != Tok::colon) fail(token_start_, "':' was expected after an object key");
        want = Want::value;
        break;
      case Want::comma_or_close:
        if (stack.empty()) {
          if (t.kind != Tok::end) fail(token_start_, "the document goes on after its top-level value");
          return base_ + len_;
        }
        if (t.kind == Tok::comma) {
          want = stack.back() == '{' ? Want::key : Want::value;
        } else if (!closes(t.kind)) {
          fail(token_start_, stack.back() == '{' ? "',' or '}' was expected" : "',' or ']' was expected");
        }
        break;
      case Want::value_or_close:  // just after '['
        if (t.kind == Tok::rbracket && closes(t.kind)) {
          want = Want::comma_or_close;
          break;
        }
        [[fallthrough]];
      case Want::value:
        want = Want::comma_or_close;
        switch (t.kind) {
          case Tok::string: h.string(t.text); break;
          case Tok::number: h.number(t.text); break;
          case Tok::literal_true: h.boolean(true); break;
          case Tok::literal_false: h.boolean(false); break;
          case Tok::literal_null: h.null(); break;
          case Tok::lbrace:
            stack.push_back('{');
            h.start_object();
            want = Want::key_or_close;
            break;
          case Tok::lbracket:
            stack.push_back('[');
            h.start_array();
            want = Want::value_or_close;
            break;
          case Tok::end:
            fail(token_start_, base_ + len_ == 0 ? "the document is empty" : "a value was expected, the document ended");
          default:
            fail(token_start_, "a value was expected");
        }
        break;
    }
  }
}

}  // namespace gtb::diagnose
