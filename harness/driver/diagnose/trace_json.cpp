// The byte layer of the trace reader: zlib inflating on its own thread into a bounded queue of chunks.
#include "harness/driver/diagnose/trace_json.h"

#include <zlib.h>
#if defined(GTB_HAVE_ISAL)
#include <isa-l/igzip_lib.h>
#endif

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <condition_variable>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <algorithm>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace gtb::diagnose {

namespace {

#if defined(GTB_HAVE_ISAL)
// ISA-L's igzip inflate for gzip files, faster than zlib's on x86-64 (its assembly kernels). Several
// members one after another read as one stream, as gzip -d reads them; bytes after the last member that
// start no member are ignored, as zlib's gzread does.
class IsalInflate {
 public:
  explicit IsalInflate(std::FILE* f) : f_(f), in_(1 << 18) { start_member(); }
  ~IsalInflate() { std::fclose(f_); }
  IsalInflate(const IsalInflate&) = delete;
  IsalInflate& operator=(const IsalInflate&) = delete;

  // Inflates into dst[0, cap); the bytes written. `last`: the input is over (`error` says why if it
  // ended badly).
  std::size_t read(char* dst, std::size_t cap, bool& last, std::string& error) {
    st_.next_out = reinterpret_cast<std::uint8_t*>(dst);
    st_.avail_out = static_cast<std::uint32_t>(cap);
    while (st_.avail_out > 0) {
      if (st_.block_state == ISAL_BLOCK_FINISH) {  // a member ended: another may follow
        if (st_.avail_in == 0 && !refill()) {
          last = true;
          break;
        }
        if (st_.next_in[0] != 0x1f) {
          last = true;
          break;
        }
        std::uint8_t* in = st_.next_in;
        const std::uint32_t in_n = st_.avail_in;
        std::uint8_t* out = st_.next_out;
        const std::uint32_t out_n = st_.avail_out;
        start_member();
        st_.next_in = in;
        st_.avail_in = in_n;
        st_.next_out = out;
        st_.avail_out = out_n;
      }
      if (st_.avail_in == 0 && !refill()) {
        error = read_error_ ? std::string("read error: ") + std::strerror(errno) : "unexpected end of file";
        last = true;
        break;
      }
      const int ret = isal_inflate(&st_);
      if (ret < 0) {
        error = ret == ISAL_INCORRECT_CHECKSUM ? "incorrect data check (CRC32 or length)"
                : ret == ISAL_INVALID_WRAPPER  ? "invalid gzip header"
                : ret == ISAL_UNSUPPORTED_METHOD ? "unknown compression method"
                                                 : "invalid deflate data (error " + std::to_string(ret) + ")";
        last = true;
        break;
      }
    }
    return cap - st_.avail_out;
  }

 private:
  void start_member() {
    isal_inflate_init(&st_);
    st_.crc_flag = ISAL_GZIP;
  }
  bool refill() {
    if (eof_) return false;
    const std::size_t n = std::fread(in_.data(), 1, in_.size(), f_);
    if (n == 0) {
      eof_ = true;
      read_error_ = std::ferror(f_) != 0;
      return false;
    }
    st_.next_in = in_.data();
    st_.avail_in = static_cast<std::uint32_t>(n);
    return true;
  }

  std::FILE* f_;
  std::vector<std::uint8_t> in_;
  inflate_state st_{};
  bool eof_ = false, read_error_ = false;
};
#endif

// True when the file starts with gzip's magic bytes.
bool is_gzip(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  unsigned char m[2] = {0, 0};
  const bool gz = std::fread(m, 1, 2, f) == 2 && m[0] == 0x1f && m[1] == 0x8b;
  std::fclose(f);
  return gz;
}

// gzread on a thread of its own, a few chunks ahead of the reader: the queue holds at most kSlots chunks
// of kChunk bytes, so memory does not grow with the file, and inflating overlaps parsing.
class FileBytes : public ByteSource {
 public:
  explicit FileBytes(const std::string& path) {
#if defined(GTB_HAVE_ISAL)
    if (is_gzip(path)) {
      std::FILE* f = std::fopen(path.c_str(), "rb");
      if (!f) throw TraceError("cannot open '" + path + "': " + std::strerror(errno));
      isal_ = std::make_unique<IsalInflate>(f);
    }
#endif
    if (!isal_) {
      file_ = gzopen(path.c_str(), "rb");
      if (!file_) throw TraceError("cannot open '" + path + "': " + std::strerror(errno));
      gzbuffer(file_, 1 << 18);
    }
    for (auto& s : slots_) s.data.resize(kChunk);
    for (std::size_t i = 0; i < kSlots; ++i) free_.push_back(i);
    worker_ = std::thread([this] { inflate_all(); });
  }
  ~FileBytes() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    worker_.join();
    if (file_) gzclose(file_);
  }
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;

  std::string_view next() override {
    if (!error_.empty()) throw TraceError(error_);
    if (at_end_) return {};
    std::unique_lock<std::mutex> lock(mu_);
    if (held_ >= 0) {  // the chunk handed out last time is the reader's no more
      free_.push_back(static_cast<std::size_t>(held_));
      held_ = -1;
      cv_.notify_all();
    }
    cv_.wait(lock, [this] { return !full_.empty(); });
    const std::size_t i = full_.front();
    full_.pop_front();
    Slot& s = slots_[i];
    if (s.last) {
      at_end_ = true;
      error_ = s.error;  // thrown on the next call, once the bytes before the damage are read
    }
    if (s.size == 0) {
      if (!error_.empty()) throw TraceError(error_);
      return {};
    }
    held_ = static_cast<long>(i);
    return {s.data.data(), s.size};
  }

 private:
  static constexpr std::size_t kChunk = 1 << 20, kSlots = 4;
  struct Slot {
    std::vector<char> data;
    std::size_t size = 0;
    bool last = false;  // the file ends with this chunk
    std::string error;  // set on the last chunk when the compressed stream is damaged
  };

  void inflate_all() {
    std::uint64_t inflated = 0;
    for (;;) {
      std::size_t i = 0;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stop_ || !free_.empty(); });
        if (stop_) return;
        i = free_.front();
        free_.pop_front();
      }
      Slot& s = slots_[i];
      s.size = 0;
      if (isal_) {
        bool last = false;
        s.size = isal_->read(s.data.data(), kChunk, last, s.error);
        inflated += s.size;
        s.last = last;
        if (!s.error.empty())
          s.error = "the compressed stream is damaged after byte " + std::to_string(inflated) +
                    " of the decompressed JSON: " + s.error;
        std::lock_guard<std::mutex> lock(mu_);
        full_.push_back(i);
        cv_.notify_all();
        if (s.last) return;
        continue;
      }
      // Fill the slot (one gzread returns at most what one inflate call gives, often less than asked).
      int n = 1;
      while (s.size < kChunk) {
        n = gzread(file_, s.data.data() + s.size, static_cast<unsigned>(kChunk - s.size));
        if (n <= 0) break;
        s.size += static_cast<std::size_t>(n);
      }
      inflated += s.size;
      if (n <= 0) {
        s.last = true;
        int err = Z_OK;
        const char* msg = gzerror(file_, &err);
        // zlib reports a gzip stream cut short only through gzerror, after the last good byte.
        if (n < 0 || (err != Z_OK && err != Z_STREAM_END))
          s.error = "the compressed stream is damaged after byte " + std::to_string(inflated) +
                    " of the decompressed JSON: " + (msg ? msg : "zlib error");
      }
      std::lock_guard<std::mutex> lock(mu_);
      full_.push_back(i);
      cv_.notify_all();
      if (s.last) return;
    }
  }

  gzFile file_ = nullptr;
#if defined(GTB_HAVE_ISAL)
  std::unique_ptr<IsalInflate> isal_;
#else
  std::unique_ptr<int> isal_;  // never set: zlib reads every file
#endif
  Slot slots_[kSlots];
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::size_t> free_, full_;
  long held_ = -1;
  bool stop_ = false;
  bool at_end_ = false;   // the reader's side: the last chunk was handed out
  std::string error_;     // the reader's side: the damage to report on the next call
  std::thread worker_;
};

class TextBytes : public ByteSource {
 public:
  explicit TextBytes(std::string_view t) : text_(t) {}
  std::string_view next() override {
    const std::string_view c = text_;
    text_ = {};
    return c;
  }

 private:
  std::string_view text_;
};

}  // namespace

std::unique_ptr<ByteSource> open_trace_file(const std::string& path) { return std::make_unique<FileBytes>(path); }
std::unique_ptr<ByteSource> text_source(std::string_view text) { return std::make_unique<TextBytes>(text); }

double json_number(std::string_view t) {
  const char* b = t.data();
  const char* e = t.data() + t.size();
  // The common case first: an integer of at most 18 digits (ids, pids, dims) cannot overflow 64 bits.
  {
    const char* p = b + (b != e && *b == '-');
    if (p != e && e - p <= 18) {
      std::int64_t v = 0;
      for (; p != e && static_cast<unsigned>(*p - '0') < 10; ++p) v = v * 10 + (*p - '0');
      if (p == e) return static_cast<double>(*b == '-' ? -v : v);
    }
  }
  // A decimal fraction without an exponent ("1701234567005517.000", "342.456") whose digits, trailing
  // zeros of the fraction dropped, make an integer m below 2^53 with at most 22 of them after the point:
  // m and 10^f are exact doubles, so m / 10^f is the correctly rounded value (Clinger's fast path), the
  // one from_chars gives.
  {
    static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const bool neg = b != e && *b == '-';
    const char* p = b + neg;
    const char* dot = static_cast<const char*>(std::memchr(p, '.', static_cast<std::size_t>(e - p)));
    if (dot) {
      const char* last = e;
      while (last > dot + 1 && last[-1] == '0') --last;  // trailing zeros of the fraction
      const auto int_digits = dot - p, frac_digits = last - (dot + 1);
      if (int_digits + frac_digits <= 15 && frac_digits <= 22) {  // 15 digits: below 2^53
        std::uint64_t m = 0;
        bool ok = int_digits > 0;
        for (const char* q = p; q != dot && ok; ++q) {
          ok = static_cast<unsigned>(*q - '0') < 10;
          m = m * 10 + static_cast<unsigned>(*q - '0');
        }
        for (const char* q = dot + 1; q != last && ok; ++q) {
          ok = static_cast<unsigned>(*q - '0') < 10;
          m = m * 10 + static_cast<unsigned>(*q - '0');
        }
        for (const char* q = last; q != e && ok; ++q) ok = *q == '0';
        if (ok && dot + 1 != e) {
          const double v = static_cast<double>(m) / kPow10[frac_digits];
          return neg ? -v : v;
        }
      }
    }
  }
  // An integer (no fraction, no exponent) that fits 64 bits: converted as an integer, then to double.
  std::int64_t i = 0;
  auto r = std::from_chars(b, e, i);
  if (r.ec == std::errc() && r.ptr == e) return static_cast<double>(i);
  if (r.ec == std::errc::result_out_of_range && t.front() != '-') {
    std::uint64_t u = 0;
    const auto ru = std::from_chars(b, e, u);
    if (ru.ec == std::errc() && ru.ptr == e) return static_cast<double>(u);
  }
  double d = 0;
  r = std::from_chars(b, e, d);
  if (r.ec == std::errc::result_out_of_range) return t.front() == '-' ? -HUGE_VAL : HUGE_VAL;
  return d;
}

namespace {
constexpr std::size_t kPad = 64;  // zero bytes after the window: the sentinel, and room for 16-byte loads

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The length of the valid UTF-8 sequence at p (a byte >= 0x80 first), 0 if it is not one. p has at least
// 4 readable bytes (the window's padding is zeros, never a continuation byte).
std::size_t utf8_length(const unsigned char* p) {
  const unsigned c = p[0];
  auto cont = [&](int i) { return (p[i] & 0xC0) == 0x80; };
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (c == 0xE0 && p[1] < 0xA0) return 0;
    if (c == 0xED && p[1] > 0x9F) return 0;
    return cont(1) && cont(2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (c == 0xF0 && p[1] < 0x90) return 0;
    if (c == 0xF4 && p[1] > 0x8F) return 0;
    return cont(1) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

int hex4(const char* p) {
  int v = 0;
  for (int i = 0; i < 4; ++i) {
    const char c = p[i];
    v <<= 4;
    if (c >= '0' && c <= '9') v |= c - '0';
    else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
    else return -1;
  }
  return v;
}

void put_utf8(std::string& out, unsigned cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}
}  // namespace

JsonReader::JsonReader(ByteSource& src) : src_(src) { buf_.assign(kPad, '\0'); }

bool JsonReader::refill(std::size_t keep_from) {
  if (eof_) return false;
  const std::string_view c = src_.next();
  if (c.empty()) {
    eof_ = true;
    return false;
  }
  const std::size_t keep = len_ - keep_from;
  if (keep > 0) std::memmove(buf_.data(), buf_.data() + keep_from, keep);
  base_ += keep_from;
  if (buf_.size() < keep + c.size() + kPad) buf_.resize(keep + c.size() + kPad);
  std::memcpy(buf_.data() + keep, c.data(), c.size());
  len_ = keep + c.size();
  std::memset(buf_.data() + len_, 0, kPad);
  pos_ = 0;
  token_start_ = 0;
  return true;
}

void JsonReader::fail(std::size_t at, const char* what) const {
  const std::size_t n = at < len_ ? std::min<std::size_t>(40, len_ - at) : 0;
  throw TraceError("malformed JSON at byte " + std::to_string(base_ + at) + " (0-based, of the decompressed trace), near '" +
                   std::string(buf_.data() + at, n) + "': " + what);
}

JsonReader::Token JsonReader::at_window_end() {
  if (!refill(len_)) {
    pos_ = token_start_ = len_;
    return {Tok::end, {}};
  }
  return next();
}

JsonReader::Token JsonReader::scan_literal(std::size_t start) {
  while (start + 5 > len_ && refill(start)) start = 0;
  const char* b = buf_.data() + start;
  if (std::memcmp(b, "true", 4) == 0) {
    pos_ = start + 4;
    return {Tok::literal_true, {}};
  }
  if (std::memcmp(b, "null", 4) == 0) {
    pos_ = start + 4;
    return {Tok::literal_null, {}};
  }
  if (std::memcmp(b, "false", 5) == 0) {
    pos_ = start + 5;
    return {Tok::literal_false, {}};
  }
  fail(start, "invalid literal (true, false or null expected)");
}

JsonReader::Token JsonReader::scan_number(std::size_t start) {
  // One pass over the grammar -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?; at the window's end (the
  // sentinel) the number may go on in the next chunk: read it again from its start there.
  for (;;) {
    const char* b = buf_.data();
    std::size_t i = start;
    auto again = [&] { return i >= len_ && refill(start); };
    if (b[i] == '-') ++i;
    if (b[i] == '0') {
      ++i;
    } else if (is_digit(b[i])) {
      while (is_digit(b[i])) ++i;
    } else {
      if (again()) { start = 0; continue; }
      fail(i, "a digit was expected in a number");
    }
    if (b[i] == '.') {
      ++i;
      if (!is_digit(b[i])) {
        if (again()) { start = 0; continue; }
        fail(i, "a digit was expected after the decimal point");
      }
      while (is_digit(b[i])) ++i;
    }
    if (b[i] == 'e' || b[i] == 'E') {
      ++i;
      if (b[i] == '+' || b[i] == '-') ++i;
      if (!is_digit(b[i])) {
        if (again()) { start = 0; continue; }
        fail(i, "a digit was expected in the exponent");
      }
      while (is_digit(b[i])) ++i;
    }
    if (again()) { start = 0; continue; }
    const char c = b[i];
    if (is_digit(c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') fail(i, "unexpected character in a number");
    pos_ = i;
    return {Tok::number, std::string_view(b + start, i - start)};
  }
}

JsonReader::Token JsonReader::scan_string(std::size_t start) {
  for (;;) {
    const char* b = buf_.data();
    std::size_t p = start + 1;
    // The fast path: 16 bytes at a time to the first quote, backslash, control byte or non-ASCII byte.
    unsigned char c = 0;
    for (;;) {
#if defined(__SSE2__)
      const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), ctl = _mm_set1_epi8(0x1F);
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + p));
      const __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                                       _mm_cmpeq_epi8(_mm_max_epu8(v, ctl), ctl));
      const unsigned m = static_cast<unsigned>(_mm_movemask_epi8(hit)) | static_cast<unsigned>(_mm_movemask_epi8(v));
      if (m == 0) {
        p += 16;
        continue;
      }
      p += static_cast<std::size_t>(__builtin_ctz(m));
#else
      while (true) {
        const auto u = static_cast<unsigned char>(b[p]);
        if (u == '"' || u == '\\' || u < 0x20 || u >= 0x80) break;
        ++p;
      }
#endif
      c = static_cast<unsigned char>(b[p]);
      if (c >= 0x80) {
        if (p + 4 > len_ && !eof_) break;  // the sequence may go on in the next chunk
        const std::size_t n = utf8_length(reinterpret_cast<const unsigned char*>(b + p));
        if (n == 0) fail(p, "invalid UTF-8 in a string");
        p += n;
        continue;
      }
      break;
    }
    if (c == '"') {
      pos_ = p + 1;
      return {Tok::string, std::string_view(b + start + 1, p - start - 1)};
    }
    if (c == '\\') return scan_escaped(start);
    if (p >= len_ || c >= 0x80) {  // the window's end: the string goes on in the next chunk
      if (refill(start)) {
        start = 0;
        continue;
      }
      if (c >= 0x80) continue;  // no more input: check the sequence as it is
      fail(len_, "the document ended inside a string");
    }
    fail(p, "a control character in a string (it must be escaped)");
  }
}

JsonReader::Token JsonReader::scan_escaped(std::size_t start) {
  // Find the closing quote with the whole string in the window, then unescape it.
  std::size_t q = 0;
  for (;;) {
    const char* b = buf_.data();
    q = start + 1;
    bool more = false;
    for (;;) {
      if (q >= len_) {
        more = true;
        break;
      }
      const char c = b[q];
      if (c == '"') break;
      if (c == '\\') {
        if (q + 12 > len_ && !eof_) {  // an escape (and a surrogate pair's second) must be whole
          more = true;
          break;
        }
        q += 2;
        continue;
      }
      ++q;
    }
    if (!more) break;
    if (refill(start)) {
      start = 0;
      continue;
    }
    if (q >= len_) fail(len_, "the document ended inside a string");
    break;  // at the end of input: unescape what there is (the loop above finds the quote or the end)
  }
  const char* b = buf_.data();
  scratch_.clear();
  std::size_t i = start + 1;
  for (;;) {
    if (i >= len_) fail(len_, "the document ended inside a string");
    const unsigned char c = static_cast<unsigned char>(b[i]);
    if (c == '"') break;
    if (c < 0x20) fail(i, "a control character in a string (it must be escaped)");
    if (c >= 0x80) {
      const std::size_t n = utf8_length(reinterpret_cast<const unsigned char*>(b + i));
      if (n == 0) fail(i, "invalid UTF-8 in a string");
      scratch_.append(b + i, n);
      i += n;
      continue;
    }
    if (c != '\\') {
      scratch_.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    const char e = b[i + 1];
    switch (e) {
      case '"': scratch_.push_back('"'); break;
      case '\\': scratch_.push_back('\\'); break;
      case '/': scratch_.push_back('/'); break;
      case 'b': scratch_.push_back('\b'); break;
      case 'f': scratch_.push_back('\f'); break;
      case 'n': scratch_.push_back('\n'); break;
      case 'r': scratch_.push_back('\r'); break;
      case 't': scratch_.push_back('\t'); break;
      case 'u': {
        int cp = hex4(b + i + 2);
        if (cp < 0) fail(i, "\\u must be followed by four hex digits");
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          const int lo = b[i + 6] == '\\' && b[i + 7] == 'u' ? hex4(b + i + 8) : -1;
          if (lo < 0xDC00 || lo > 0xDFFF) fail(i, "a high surrogate must be followed by a \\u low surrogate");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          i += 6;
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          fail(i, "a low surrogate without a high one before it");
        }
        put_utf8(scratch_, static_cast<unsigned>(cp));
        i += 6;
        continue;
      }
      default: fail(i, "invalid escape in a string");
    }
    i += 2;
  }
  pos_ = i + 1;
  return {Tok::string, scratch_};
}

}  // namespace gtb::diagnose
