// gtb diagnose's JSON reader (trace_json.h): tokens and strings read right, whatever the chunks the
// bytes arrive in; malformed input refused with the 0-based offset of the first bad byte.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <cmath>
#include <cstdio>

#include <string>
#include <string_view>
#include <vector>

#include "harness/driver/diagnose/diagnose_trace.h"
#include "harness/driver/diagnose/trace_json.h"

using namespace gtb::diagnose;

namespace {

const std::string kTraces = std::string(GTB_FIXTURE_DIR) + "/traces/";

// Hands out a text n bytes at a time (a token is then split across chunks at every position).
class Chunks : public ByteSource {
 public:
  Chunks(std::string text, std::size_t n) : text_(std::move(text)), n_(n) {}
  std::string_view next() override {
    const std::size_t k = std::min(n_, text_.size() - at_);
    chunk_ = text_.substr(at_, k);  // a copy: the reader must not keep views into an old chunk
    at_ += k;
    return chunk_;
  }

 private:
  std::string text_, chunk_;
  std::size_t n_, at_ = 0;
};

// Writes every callback down, one line each.
struct Record {
  std::string out;
  bool null() { return put("null"); }
  bool boolean(bool b) { return put(b ? "true" : "false"); }
  bool number(std::string_view t) { return put("num " + std::string(t)); }
  bool string(std::string_view s) { return put("str " + std::string(s)); }
  bool key(std::string_view s) { return put("key " + std::string(s)); }
  bool start_object() { return put("{"); }
  bool end_object() { return put("}"); }
  bool start_array() { return put("["); }
  bool end_array() { return put("]"); }
  bool put(const std::string& s) {
    out += s + "\n";
    return true;
  }
};

std::string record(const std::string& text, std::size_t chunk) {
  Chunks src(text, chunk);
  Record r;
  const std::uint64_t n = JsonReader(src).parse(r);
  EXPECT_EQ(n, text.size());
  return r.out;
}

// The message of the TraceError that reading `text` throws ("" when it does not throw).
std::string error_of(const std::string& text, std::size_t chunk = 1 << 20) {
  Chunks src(text, chunk);
  Record r;
  try {
    JsonReader(src).parse(r);
  } catch (const TraceError& e) {
    return e.what();
  }
  return "";
}

std::string inflate(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  std::string out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  gzclose(f);
  return out;
}

}  // namespace

TEST(DiagnoseJson, TokensAndStrings) {
  const std::string t =
      R"({"a": [1, -2.5e+3, 0, true, false, null, {}, []], "s": "x\"y\\z\/\b\f\n\r\t", "u": "\u00e9\u20ac\ud83d\ude00", "r": "é€😀"})";
  EXPECT_EQ(record(t, 1 << 20),
            "{\nkey a\n[\nnum 1\nnum -2.5e+3\nnum 0\ntrue\nfalse\nnull\n{\n}\n[\n]\n]\nkey s\nstr x\"y\\z/\b\f\n\r\t\n"
            "key u\nstr \xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\nkey r\nstr \xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\n}\n");
}

TEST(DiagnoseJson, EveryChunkSizeReadsTheSame) {
  // Every token split at every position: strings (escaped, non-ASCII), numbers, literals.
  const std::string t =
      R"({"traceEvents": [{"ph": "X", "name": "k\"\u00e9€", "ts": 1661203462598738.125, "dur": 7, "ok": true,)"
      R"( "no": false, "x": null, "dims": [[64, 1], []]}], "long": ")" + std::string(300, 'a') + R"("})";
  const std::string whole = record(t, t.size());
  for (std::size_t n = 1; n <= 40; ++n) EXPECT_EQ(record(t, n), whole) << "chunks of " << n << " bytes";
}

TEST(DiagnoseJson, ARealTraceReadsTheSameInSmallChunks) {
  const std::string t = inflate(kTraces + "mi250-minitoy-train.json.gz");
  ASSERT_GT(t.size(), 10000u);
  const std::string whole = record(t, t.size());
  EXPECT_EQ(record(t, 1), whole);
  EXPECT_EQ(record(t, 4093), whole);
}

TEST(DiagnoseJson, MalformedInputNamesTheOffset) {
  struct Case {
    std::string text;
    std::uint64_t offset;
  };
  const std::vector<Case> cases = {
      {R"({"traceEvents":[{"ph":"X","ts":1,,}]})", 33},  // a second comma
      {"", 0},                                          // empty
      {"   ", 3},                                       // only blanks: the value was due at the end
      {R"({"a": 1} x)", 9},                             // something after the document
      {R"({"a" 1})", 5},                                // no colon
      {R"({"a": 1,})", 8},                              // a trailing comma in an object
      {R"([1, 2,])", 6},                                // a trailing comma in an array
      {R"({"a": [1 2]})", 9},                           // no comma in an array
      {R"({"a": 01})", 7},                              // a leading zero
      {R"({"a": -})", 7},                               // a minus without digits
      {R"({"a": 1.})", 8},                              // no digit after the point
      {R"({"a": 1e})", 8},                              // no digit in the exponent
      {R"({"a": tru})", 6},                             // a broken literal
      {R"({"a": "x\q"})", 8},                           // an invalid escape
      {R"({"a": "\u12g4"})", 7},                        // a broken \u
      {R"({"a": "\udc00"})", 7},                        // a low surrogate alone
      {R"({"a": "\ud800x"})", 7},                       // a high surrogate alone
      {std::string(R"({"a": "x)") + "\n" + R"("})", 8},  // a raw newline in a string
      {std::string(R"({"a": "x)") + "\xC3\x28" + R"("})", 8},  // invalid UTF-8
      {std::string(R"({"a": "x)") + "\xED\xA0\x80" + R"("})", 8},  // an encoded surrogate
      {std::string(R"({"a": )") + '\0' + "1}", 6},                 // a NUL byte
      {R"({"a": "abc)", 10},                                       // the end inside a string
      {R"({"a": [1, 2)", 11},                                      // the end inside an array
      {R"({"a" : {"b": 1})", 15},                                  // the end inside an object
      {R"({1: 2})", 1},                                            // a key that is not a string
  };
  for (const auto& c : cases) {
    for (std::size_t chunk : {std::size_t{1}, std::size_t{3}, std::size_t{1} << 20}) {
      const std::string e = error_of(c.text, chunk);
      EXPECT_NE(e.find("malformed JSON at byte " + std::to_string(c.offset) + " "), std::string::npos)
          << "input " << c.text << " in chunks of " << chunk << ": " << (e.empty() ? "no error" : e);
    }
  }
}

TEST(DiagnoseJson, NumbersAsAJsonLibraryReadsThem) {
  EXPECT_EQ(json_number("0"), 0.0);
  EXPECT_FALSE(std::signbit(json_number("-0")));  // an integer: 0, not -0
  EXPECT_TRUE(std::signbit(json_number("-0.0")));
  EXPECT_EQ(json_number("1661203462598738"), 1661203462598738.0);
  EXPECT_EQ(json_number("18446744073709551615"), 18446744073709551615.0);  // a uint64
  EXPECT_EQ(json_number("1e400"), HUGE_VAL);
  EXPECT_EQ(json_number("1701234567000955.123"), 1701234567000955.123);
  EXPECT_EQ(json_number("0.1"), 0.1);
  EXPECT_EQ(json_number("-2.5E-3"), -2.5e-3);
}

// json_number's shortcuts (short integers; decimals of at most 15 digits, as profilers write times) give
// the bits a correctly rounded conversion gives, on numbers drawn around every boundary they test.
TEST(DiagnoseJson, NumberShortcutsAgreeWithACorrectlyRoundedConversion) {
  std::uint64_t state = 88172645463325252ull;
  auto next = [&] {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return state;
  };
  const char* fixed[] = {"1701234567005517.000", "1701234567015592.750", "342.456",  "0.1",      "0.3",
                         "9007199254740993.0",   "900719925474099.3",    "123456789012345.6", "-0.000",
                         "1.0000000000000000000000", "0.0000000000000000000001", "999999999999999999",
                         "-999999999999999999", "1000000000000000000", "7.00", "-12.5000"};
  std::vector<std::string> cases(std::begin(fixed), std::end(fixed));
  for (int i = 0; i < 200000; ++i) {
    const int int_digits = static_cast<int>(next() % 20), frac_digits = static_cast<int>(next() % 24);
    std::string s = next() % 4 == 0 ? "-" : "";
    s += static_cast<char>('1' + next() % 9);
    for (int d = 1; d < int_digits; ++d) s += static_cast<char>('0' + next() % 10);
    if (frac_digits > 0) {
      s += '.';
      for (int d = 0; d < frac_digits; ++d) s += next() % 3 == 0 ? '0' : static_cast<char>('0' + next() % 10);
    }
    cases.push_back(s);
  }
  for (const auto& c : cases) {
    double want = 0;
    std::from_chars(c.data(), c.data() + c.size(), want);
    if (c.find('.') == std::string::npos) {  // an integer: as a 64-bit integer where it fits, as said above
      long long i = 0;
      const auto r = std::from_chars(c.data(), c.data() + c.size(), i);
      if (r.ec == std::errc()) want = static_cast<double>(i);
    }
    const double got = json_number(c);
    EXPECT_EQ(std::memcmp(&got, &want, sizeof got), 0) << c << ": " << got << " != " << want;
  }
}

namespace {

std::string slurp(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  std::string out;
  char buf[1 << 16];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  std::fclose(f);
  return out;
}

void spill(const std::string& path, const std::string& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
}

std::string temp_path(const std::string& name) {
  return testing::TempDir() + "gtb-diagnose-json-" + std::to_string(::getpid()) + "-" + name;
}

}  // namespace

TEST(DiagnoseJson, GzipMembersReadAsOneStream) {
  // gzip -d reads members one after another as one stream; a trace written that way reads whole.
  const std::string t = inflate(kTraces + "mi250-minitoy-train.json.gz");
  const std::string path = temp_path("members.json.gz");
  std::remove(path.c_str());
  for (const auto& part : {t.substr(0, t.size() / 3), t.substr(t.size() / 3)}) {
    gzFile f = gzopen(path.c_str(), "ab");  // "a": a new member after the ones there
    gzwrite(f, part.data(), static_cast<unsigned>(part.size()));
    gzclose(f);
  }
  const Trace whole = read_trace_text(t);
  const Trace two = read_trace(path);
  EXPECT_EQ(two.bytes_read, t.size());
  EXPECT_EQ(two.events_seen, whole.events_seen);
  EXPECT_EQ(two.gpu.size(), whole.gpu.size());
  std::remove(path.c_str());
}

TEST(DiagnoseJson, DamagedGzipIsRefusedWithTheOffset) {
  const std::string gz = slurp(kTraces + "a100-nccl-3steps.json.gz");
  const std::string path = temp_path("damaged.json.gz");
  for (const std::string& bad : {gz.substr(0, gz.size() / 2),                      // cut short
                                 gz.substr(0, gz.size() - 4) + std::string(4, 'x'),  // a wrong length
                                 [&] {                                              // a byte flipped
                                   std::string b = gz;
                                   b[b.size() / 2] = static_cast<char>(b[b.size() / 2] ^ 0x55);
                                   return b;
                                 }()}) {
    spill(path, bad);
    try {
      read_trace(path);
      ADD_FAILURE() << "a damaged gzip file was read";
    } catch (const TraceError& e) {
      const std::string m = e.what();
      EXPECT_TRUE(m.find("the compressed stream is damaged after byte ") != std::string::npos ||
                  m.find("malformed JSON at byte ") != std::string::npos)
          << m;
    }
  }
  std::remove(path.c_str());
}
