// The byte layer of the trace reader: zlib inflating on its own thread into a bounded queue of chunks.
#include "harness/driver/diagnose/trace_json.h"

#include <zlib.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace gtb::diagnose {

namespace {

// gzread on a thread of its own, a few chunks ahead of the reader: the queue holds at most kSlots chunks
// of kChunk bytes, so memory does not grow with the file, and inflating overlaps parsing.
class FileBytes : public ByteSource {
 public:
  explicit FileBytes(const std::string& path) : file_(gzopen(path.c_str(), "rb")) {
    if (!file_) throw TraceError("cannot open '" + path + "': " + std::strerror(errno));
    gzbuffer(file_, 1 << 18);
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
    gzclose(file_);
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

  gzFile file_;
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
  if (t.find_first_of(".eE") == std::string_view::npos) {
    std::int64_t i = 0;
    if (std::from_chars(b, e, i).ec == std::errc()) return static_cast<double>(i);
    std::uint64_t u = 0;
    if (std::from_chars(b, e, u).ec == std::errc()) return static_cast<double>(u);
  }
  double d = 0;
  const auto r = std::from_chars(b, e, d);
  if (r.ec == std::errc::result_out_of_range) return t.front() == '-' ? -HUGE_VAL : HUGE_VAL;
  return d;
}

void throw_parse_error(std::uint64_t offset, std::string_view near, const char* what) {
  throw TraceError("malformed JSON at byte " + std::to_string(offset) + " (0-based, of the decompressed trace), near '" +
                   std::string(near) + "': " + what);
}

}  // namespace gtb::diagnose
