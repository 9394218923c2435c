// The byte layer of the trace reader: the decompressed JSON of a trace, inflated by zlib on a thread of its
// own and handed to the parser in chunks through a bounded queue (inflating and parsing overlap on two
// cores; memory is the queue's few chunks, not the file), and RapidJSON's streaming SAX `Reader` over it.
#pragma once

#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

#include <cstdint>
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

// A file, gzipped or plain (zlib's gzread reads both), inflated on its own thread ahead of the reader.
std::unique_ptr<ByteSource> open_trace_file(const std::string& path);
// Text already in memory (tests): one chunk.
std::unique_ptr<ByteSource> text_source(std::string_view text);

// RapidJSON's input-stream concept over a ByteSource: Peek, Take, and Tell (the 0-based offset in the
// decompressed JSON, what error messages name).
class JsonInput {
 public:
  using Ch = char;
  explicit JsonInput(ByteSource& src) : src_(src) {}
  Ch Peek() { return cur_ != end_ ? *cur_ : fill(); }
  Ch Take() {
    if (cur_ == end_ && fill() == '\0') return '\0';
    return *cur_++;
  }
  std::size_t Tell() const { return static_cast<std::size_t>(base_ + static_cast<std::uint64_t>(cur_ - begin_)); }
  std::uint64_t bytes() const { return base_ + static_cast<std::uint64_t>(end_ - begin_); }
  // Up to n bytes from the current position within the current chunk (for error messages).
  std::string_view near(std::size_t n) const {
    const auto left = static_cast<std::size_t>(end_ - cur_);
    return {cur_, left < n ? left : n};
  }
  // Writing is for in-situ parsing, which this stream does not do.
  Ch* PutBegin() { return nullptr; }
  void Put(Ch) {}
  void Flush() {}
  std::size_t PutEnd(Ch*) { return 0; }

 private:
  Ch fill() {
    while (cur_ == end_ && !done_) {
      base_ += static_cast<std::uint64_t>(end_ - begin_);
      const std::string_view c = src_.next();
      if (c.empty()) done_ = true;
      begin_ = cur_ = c.data();
      end_ = c.data() + c.size();
    }
    return cur_ != end_ ? *cur_ : '\0';
  }

  ByteSource& src_;
  const char* begin_ = nullptr;
  const char* cur_ = nullptr;
  const char* end_ = nullptr;
  std::uint64_t base_ = 0;
  bool done_ = false;
};

// RapidJSON's SAX calls, forwarded to a handler with gtb's names: null(), boolean(b), number(text) (the
// numeral as written: the handler converts only the numbers it keeps), string(sv), key(sv),
// start_object(), end_object(), start_array(), end_array(). Each returns true to go on.
template <class H>
struct SaxAdapter {
  H& h;
  using Ch = char;
  bool Null() { return h.null(); }
  bool Bool(bool b) { return h.boolean(b); }
  // With kParseNumbersAsStringsFlag every number arrives as RawNumber; these are never called.
  bool Int(int) { return h.null(); }
  bool Uint(unsigned) { return h.null(); }
  bool Int64(std::int64_t) { return h.null(); }
  bool Uint64(std::uint64_t) { return h.null(); }
  bool Double(double) { return h.null(); }
  bool RawNumber(const Ch* s, rapidjson::SizeType n, bool) { return h.number(std::string_view(s, n)); }
  bool String(const Ch* s, rapidjson::SizeType n, bool) { return h.string(std::string_view(s, n)); }
  bool StartObject() { return h.start_object(); }
  bool Key(const Ch* s, rapidjson::SizeType n, bool) { return h.key(std::string_view(s, n)); }
  bool EndObject(rapidjson::SizeType) { return h.end_object(); }
  bool StartArray() { return h.start_array(); }
  bool EndArray(rapidjson::SizeType) { return h.end_array(); }
};

// The text of a JSON number as a double, the way a JSON library that reads integers as 64-bit integers
// and other numbers with strtod gives it (a 64-bit integer cast to double; "-0" is 0): correctly rounded.
double json_number(std::string_view text);

[[noreturn]] void throw_parse_error(std::uint64_t offset, std::string_view near, const char* what);

// Reads the whole JSON from src into h. Returns the decompressed bytes read. Throws TraceError naming the
// 0-based byte offset of the first malformed byte.
template <class H>
std::uint64_t parse_json(ByteSource& src, H& h) {
  JsonInput in(src);
  SaxAdapter<H> sax{h};
  rapidjson::Reader reader;
  const rapidjson::ParseResult r =
      reader.Parse<rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseValidateEncodingFlag>(in, sax);
  if (r.IsError()) throw_parse_error(r.Offset(), in.near(40), rapidjson::GetParseError_En(r.Code()));
  return in.bytes();
}

}  // namespace gtb::diagnose
