// Output files and stdout: written whole or not at all, never over what is not a regular file, and
// every write error is an exit code (docs/outputs.md, "Writing files").
// SPDX-License-Identifier: Apache-2.0
#include "cli/output.hpp"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <streambuf>
#include <type_traits>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/app.hpp"
#include "cli/context.hpp"
#include "core/error.hpp"
#include "report/table.hpp"

namespace ffsim::cli {

namespace fs = std::filesystem;

namespace {

// A streambuf over a file descriptor that keeps the first error (errno) instead of dropping it as
// std::ofstream does, so that a message can say "No space left on device".
class FdBuf : public std::streambuf {
public:
  explicit FdBuf(int fd) : fd_(fd) { setp(buf_.data(), buf_.data() + buf_.size()); }
  FdBuf(const FdBuf&) = delete;
  FdBuf& operator=(const FdBuf&) = delete;
  ~FdBuf() override = default;
  [[nodiscard]] int error() const { return error_; }
  /// Writes what is buffered; false (and error() set) on a write error.
  bool flush_all() { return sync() == 0; }

protected:
  int_type overflow(int_type c) override {
    if (sync() != 0) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override {
    const char* p = pbase();
    const char* end = pptr();
    while (p < end && error_ == 0) {
      const ssize_t n = ::write(fd_, p, static_cast<std::size_t>(end - p));
      if (n < 0) {
        if (errno == EINTR) continue;
        error_ = errno;
      } else {
        p += n;
      }
    }
    setp(buf_.data(), buf_.data() + buf_.size());  // what could not be written is dropped once
    return error_ == 0 ? 0 : -1;
  }

private:
  int fd_;
  int error_ = 0;
  std::array<char, 1 << 16> buf_{};
};

// /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: a descriptor this process already holds
// (a pipe, a terminal, the file the shell opened), written in place on that descriptor so that it
// shares the shell's offset; nullopt for any other path.
std::optional<int> held_descriptor(const std::string& path) {
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  const std::string own = "/proc/" + std::to_string(::getpid()) + "/fd/";
  for (const std::string& prefix : {std::string("/dev/fd/"), std::string("/proc/self/fd/"), own}) {
    if (path.rfind(prefix, 0) != 0 || path.size() == prefix.size()) continue;
    const std::string n = path.substr(prefix.size());
    if (n.size() > 6 || n.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    return std::stoi(n);
  }
  return std::nullopt;
}

std::string why(int err) { return std::strerror(err); }

// What is at an output path, and how it is written.
enum class Target { kAbsent, kRegular, kInPlace, kFifo, kHeld };
struct Resolved {
  Target kind = Target::kAbsent;
  fs::path file;  ///< the file to write: the path itself, or the last target of its symbolic links
  int fd = -1;    ///< kHeld: the descriptor
  mode_t mode = 0666;
};

// Resolves `path` for `option` by the rules of docs/outputs.md; a UsageError (exit 2) for what is
// refused: a folder, a dangling link, a block device, a socket, a FIFO no process reads.
Resolved resolve(const std::string& option, const std::string& path) {
  if (path.empty()) throw UsageError(option + ": expected a file name, got an empty value");
  Resolved r;
  if (const auto fd = held_descriptor(path)) {
    if (::fcntl(*fd, F_GETFD) < 0)
      throw UsageError(option + ": cannot write " + path + ": descriptor " + std::to_string(*fd) + " is not open");
    r.kind = Target::kHeld;
    r.fd = *fd;
    r.file = path;
    return r;
  }
  std::error_code ec;
  fs::path file(path);
  // Write through symbolic links: the links stay, the file the last one names is replaced. A link
  // to a held descriptor (a link to /dev/stdout) is that descriptor.
  for (int hops = 0; fs::is_symlink(fs::symlink_status(file, ec)); ++hops) {
    if (held_descriptor(file.string())) return resolve(option, file.string());
    if (hops == 40) throw UsageError(option + ": cannot write " + path + ": too many levels of symbolic links");
    const fs::path target = fs::read_symlink(file, ec);
    if (ec) throw UsageError(option + ": cannot write " + path + ": " + ec.message());
    file = target.is_absolute() ? target : file.parent_path() / target;
    if (!fs::exists(fs::symlink_status(file, ec)))
      throw UsageError(option + ": " + path + " is a symbolic link to " + file.string() +
                       ", which does not exist: give the file itself, or remove the link");
  }
  if (file != fs::path(path))
    if (held_descriptor(file.string())) return resolve(option, file.string());
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) {
    if (errno != ENOENT) throw UsageError(option + ": cannot write " + path + ": " + why(errno));
    const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
    if (!fs::is_directory(dir, ec))
      throw UsageError(option + ": cannot write " + path + ": the folder " + dir.string() + " does not exist");
    r.file = file;
    return r;  // absent: created whole
  }
  r.file = file;
  r.mode = st.st_mode & 07777;
  if (S_ISREG(st.st_mode)) {
    r.kind = Target::kRegular;
  } else if (S_ISDIR(st.st_mode)) {
    throw UsageError(option + ": " + path + " is a folder; give a file name");
  } else if (S_ISCHR(st.st_mode)) {
    r.kind = Target::kInPlace;  // /dev/null, a terminal: written in place, never replaced
  } else if (S_ISFIFO(st.st_mode)) {
    // Written in place when a process reads it; whether one does is known only by opening it, at
    // write time (an open and close now would end its reader's input before the output came).
    r.kind = Target::kFifo;
  } else {
    throw UsageError(option + ": " + path + " is " + (S_ISBLK(st.st_mode) ? "a block device" : "a socket") +
                     ", not a file: give a regular file (ffsim never writes over a device)");
  }
  return r;
}

// Writes `write`'s output to `fd` and flushes it; the error number of the first failed write, or 0.
int write_fd(int fd, const std::function<void(std::ostream&)>& write) {
  FdBuf buf(fd);
  std::ostream os(&buf);
  write(os);
  buf.flush_all();
  return buf.error();
}

}  // namespace

void check_output_path(const std::string& option, const std::string& path, const std::vector<std::string>& inputs) {
  const Resolved r = resolve(option, path);
  if (r.kind != Target::kRegular) return;
  for (const auto& in : inputs) {
    std::error_code e2;
    if (!in.empty() && fs::equivalent(r.file, fs::path(in), e2))
      throw UsageError(option + ": " + path + " is also an input of this command" +
                       (in == path ? std::string() : " (the same file as " + in + ")") +
                       "; writing it would destroy that input: give another file name");
  }
}

void write_output(const std::string& option, const std::string& path, const std::function<void(std::ostream&)>& write) {
  const Resolved r = resolve(option, path);
  const std::string fail = option + ": cannot write " + path + ": ";
  if (r.kind == Target::kHeld) {
    if (r.fd == 1) std::cout.flush();  // what was printed before comes first
    if (const int err = write_fd(r.fd, write)) throw UsageError(fail + why(err));
    return;
  }
  if (r.kind == Target::kInPlace || r.kind == Target::kFifo) {
    // A named pipe that no process reads would block the open until one does: refused instead
    // (O_NONBLOCK: ENXIO when there is no reader); one with a reader is written blocking.
    const int fd = ::open(r.file.c_str(), O_WRONLY | O_CLOEXEC | (r.kind == Target::kFifo ? O_NONBLOCK : 0));
    if (fd < 0 && r.kind == Target::kFifo && errno == ENXIO)
      throw UsageError(option + ": " + path + " is a named pipe (FIFO) that no process reads; start its reader first, " +
                       "or give a regular file");
    if (fd < 0) throw UsageError(fail + why(errno));
    if (r.kind == Target::kFifo) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    int err = 0;
    try {
      err = write_fd(fd, write);
    } catch (...) {
      ::close(fd);
      throw;
    }
    if (::close(fd) != 0 && err == 0) err = errno;
    if (err) throw UsageError(fail + why(err));
    return;
  }
  // Absent or a regular file: a temporary file beside it, written, flushed to disk and renamed
  // over it, so that an error (a full disk, an exception) leaves what was there as it was.
  const fs::path dir = r.file.has_parent_path() ? r.file.parent_path() : fs::path(".");
  fs::path tmp;
  int fd = -1;
  for (int i = 0; i < 100 && fd < 0; ++i) {
    tmp = dir / ("." + r.file.filename().string() + ".ffsim-tmp-" + std::to_string(::getpid()) + "-" + std::to_string(i));
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) throw UsageError(fail + why(errno));
  }
  if (fd < 0) throw UsageError(fail + "no free temporary name in " + dir.string());
  auto discard = [&] {
    ::close(fd);
    ::unlink(tmp.c_str());
  };
  int err = 0;
  try {
    err = write_fd(fd, write);
  } catch (...) {
    discard();
    throw;
  }
  // The replaced file's permissions carry over (a new file gets 0666 less the umask).
  if (err == 0 && r.kind == Target::kRegular && ::fchmod(fd, r.mode) != 0) err = errno;
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (err) {
    discard();
    throw UsageError(fail + why(err));
  }
  if (::close(fd) != 0) {
    err = errno;
    ::unlink(tmp.c_str());
    throw UsageError(fail + why(err));
  }
  if (::rename(tmp.c_str(), r.file.c_str()) != 0) {
    err = errno;
    ::unlink(tmp.c_str());
    throw UsageError(fail + why(err));
  }
}

// ---------------------------------------------------------------- JSON documents

std::string schema_version(std::string_view command) {
  // Version 1 of every command's document is the first with a schema_version (2026-12-01): the
  // top level an object, quantities in SI base units (B/s, FLOP/s, s, B, W).
  return "ffsim." + std::string(command) + "/1";
}

void begin_json(report::JsonWriter& w, std::string_view command) {
  w.begin_object();
  w.field("schema_version", schema_version(command));
}

namespace {

void write_cell(report::JsonWriter& w, const Cell& c) {
  std::visit(
      [&w](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::nullptr_t>) w.null();
        else w.value(v);
      },
      c);
}

}  // namespace

std::string cell_text(const Cell& c) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) return v;
        else if constexpr (std::is_same_v<T, double>) return report::JsonWriter::number(v) == "null" ? "" : report::JsonWriter::number(v);
        else if constexpr (std::is_same_v<T, long long>) return std::to_string(v);
        else if constexpr (std::is_same_v<T, bool>) return v ? "true" : "false";
        else return "";
      },
      c);
}

std::string csv_line(const std::vector<std::string>& cells) {
  std::string line;
  for (std::size_t c = 0; c < cells.size(); ++c) {
    if (c) line += ',';
    const std::string& s = cells[c];
    if (s.find_first_of(",\"\n") == std::string::npos) {
      line += s;
      continue;
    }
    line += '"';
    for (char ch : s) line += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    line += '"';
  }
  return line + '\n';
}

std::string json_cell(const Cell& c) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>)
          return report::JsonWriter::quote(v);
        else if constexpr (std::is_same_v<T, double>)
          return report::JsonWriter::number(v);
        else if constexpr (std::is_same_v<T, long long>)
          return std::to_string(v);
        else if constexpr (std::is_same_v<T, bool>)
          return v ? "true" : "false";
        else
          return "null";
      },
      c);
}

std::string json_record_line(const Record& r) {
  std::string line = "{";
  for (std::size_t i = 0; i < r.size(); ++i)
    line += (i ? ", " : "") + report::JsonWriter::quote(r[i].first) + ": " + json_cell(r[i].second);
  return line + "}";
}

void write_records_json(report::JsonWriter& w, const std::vector<Record>& rows) {
  w.begin_array();
  for (const auto& r : rows) {
    w.begin_object();
    for (const auto& [k, v] : r) {
      w.key(k);
      write_cell(w, v);
    }
    w.end_object();
  }
  w.end_array();
}

void write_records_csv(std::ostream& os, const std::vector<Record>& rows) {
  if (rows.empty()) return;
  std::vector<std::string> header;
  for (const auto& kv : rows.front()) header.push_back(kv.first);
  report::Table t(header);
  for (const auto& r : rows) {
    std::vector<std::string> cells;
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (i >= header.size() || r[i].first != header[i]) throw std::logic_error("CSV rows with different columns: " + r[i].first);
      cells.push_back(cell_text(r[i].second));
    }
    if (cells.size() != header.size()) throw std::logic_error("a CSV row with " + std::to_string(cells.size()) + " columns");
    t.add(std::move(cells));
  }
  t.print_csv(os);
}

// ---------------------------------------------------------------- stdout

struct StdoutGuard::Impl {
  FdBuf buf{1};
  std::streambuf* old = nullptr;
};

StdoutGuard::StdoutGuard() : impl_(std::make_unique<Impl>()) {
  std::cout.flush();
  impl_->old = std::cout.rdbuf(&impl_->buf);
}

StdoutGuard::~StdoutGuard() {
  impl_->buf.flush_all();
  std::cout.rdbuf(impl_->old);
}

int StdoutGuard::finish(int rc) {
  impl_->buf.flush_all();
  const int err = impl_->buf.error();
  if (err == 0) return rc;
  std::cerr << "ffsim: cannot write the output to stdout: " << why(err) << " (the output is incomplete)\n";
  return rc == kOk ? kUsage : rc;
}

}  // namespace ffsim::cli
