// engine/common/output_file.cpp — see output_file.hpp.
#include "engine/common/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <utility>

#include "engine/common/error.hpp"

namespace proflint {

namespace {

std::string errno_text(int err) { return std::strerror(err); }

std::string folder_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string name_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

const char* kind_name(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file, character device or FIFO";
}

// Writes all of `data` to `fd`; returns 0 or the errno of the failing write.
int write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return 0;
}

// Copies the file at `from` into `fd`; returns 0 or an errno.
int copy_into(const std::string& from, int fd) {
  int in = ::open(from.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (in < 0) return errno;
  char buffer[1 << 16];
  int err = 0;
  for (;;) {
    ssize_t n = ::read(in, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      err = errno;
      break;
    }
    if (n == 0) break;
    if ((err = write_all(fd, buffer, static_cast<size_t>(n))) != 0) break;
  }
  ::close(in);
  return err;
}

// fsync of a file by path (no link followed); returns 0 or an errno.
int sync_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return errno;
  int err = ::fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
  return err;
}

}  // namespace

OutputFile::OutputFile(std::string path, std::string flag) : path_(std::move(path)), flag_(std::move(flag)) {
  auto refuse = [&](const std::string& why) {
    return input_error(path_, "", (flag_.empty() ? "" : flag_ + ": ") + why);
  };
  if (path_.empty() || path_ == "-") {
    kind_ = Kind::stdout_stream;
    return;
  }
  target_ = path_;
  struct stat st {};
  // /dev and /proc hold devices and descriptors (/dev/stdout, /proc/self/fd/1), never outputs to
  // be replaced: whatever is there is written into as it is.
  if (starts_with(path_, "/dev/") || starts_with(path_, "/proc/")) {
    if (::stat(path_.c_str(), &st) != 0) {
      int err = errno;
      throw refuse("cannot write there: " + errno_text(err) + " (under /dev and /proc proflint only writes into what exists)");
    }
    if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode))
      throw refuse(std::string("is ") + kind_name(st.st_mode) + "; expected a file, a character device or a FIFO");
    kind_ = Kind::special_stream;
    return;
  }
  if (::lstat(path_.c_str(), &st) != 0) {
    int err = errno;
    if (err != ENOENT) throw refuse("cannot look at the output path: " + errno_text(err));
    struct stat folder {};
    std::string dir = folder_of(path_);
    if (::stat(dir.c_str(), &folder) != 0 || !S_ISDIR(folder.st_mode))
      throw refuse("the folder " + dir + " does not exist");
    kind_ = Kind::replace;
    return;
  }
  if (S_ISLNK(st.st_mode)) {
    // The link stays; what it points to is written (a regular file there is replaced atomically).
    if (::stat(path_.c_str(), &st) != 0) {
      int err = errno;
      throw refuse("is a symbolic link whose target cannot be written (" + errno_text(err) +
                   "); proflint does not create files through links");
    }
    if (S_ISREG(st.st_mode)) {
      char resolved[PATH_MAX];
      if (!::realpath(path_.c_str(), resolved)) {
        int err = errno;
        throw refuse("cannot resolve the symbolic link: " + errno_text(err));
      }
      target_ = resolved;
      kind_ = Kind::replace;
      mode_ = static_cast<int>(st.st_mode & 07777);
      return;
    }
  }
  if (S_ISREG(st.st_mode)) {
    kind_ = Kind::replace;
    mode_ = static_cast<int>(st.st_mode & 07777);  // a private 0600 store stays private
  } else if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
    kind_ = Kind::special_stream;
  } else if (S_ISDIR(st.st_mode)) {
    throw refuse("is a directory; expected a file path");
  } else {
    throw refuse(std::string("is ") + kind_name(st.st_mode) + "; expected a file, a character device or a FIFO");
  }
}

OutputFile::OutputFile(OutputFile&& other) noexcept
    : path_(std::move(other.path_)),
      flag_(std::move(other.flag_)),
      kind_(other.kind_),
      target_(std::move(other.target_)),
      private_dir_(std::move(other.private_dir_)),
      temp_(std::move(other.temp_)),
      content_(std::move(other.content_)),
      fd_(other.fd_),
      mode_(other.mode_),
      staged_(other.staged_),
      committed_(other.committed_) {
  other.private_dir_.clear();
  other.temp_.clear();
  other.staged_ = false;
  other.fd_ = -1;
}

OutputFile::~OutputFile() { discard(); }

void OutputFile::discard() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temp_.empty()) ::unlink(temp_.c_str());
  if (!private_dir_.empty()) ::rmdir(private_dir_.c_str());
  temp_.clear();
  private_dir_.clear();
}

// A folder only this process can write: a file inside it cannot be swapped for a link by anyone
// else, and two writers of one target never share a temporary file.
void OutputFile::make_private_dir(const std::string& folder) {
  discard();
  std::string name = name_of(target_).substr(0, 64);
  std::string templ = folder + "/." + name + ".proflint-XXXXXX";
  if (!::mkdtemp(templ.data())) {
    int err = errno;
    throw input_error(path_, "", "cannot create a temporary folder in " + folder + ": " + errno_text(err));
  }
  private_dir_ = templ;
  temp_ = private_dir_ + "/" + (name.empty() ? "output" : name);
}

void OutputFile::stage(std::string_view content) {
  if (kind_ != Kind::replace) {
    content_.assign(content);
    staged_ = true;
    return;
  }
  make_private_dir(folder_of(target_));
  int fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) {
    int err = errno;
    discard();
    throw input_error(path_, "", "cannot create the temporary file: " + errno_text(err));
  }
  int err = mode_ >= 0 && ::fchmod(fd, static_cast<mode_t>(mode_)) != 0 ? errno : 0;
  if (err == 0) err = write_all(fd, content.data(), content.size());
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) {
    discard();
    throw input_error(path_, "", "write failed: " + errno_text(err));
  }
  staged_ = true;
}

void OutputFile::stage_file(const std::function<void(const std::string&)>& fill) {
  if (kind_ == Kind::replace) {
    make_private_dir(folder_of(target_));
  } else {
    // Produced in the temporary folder, then copied into the stream at commit.
    const char* tmp = std::getenv("TMPDIR");
    make_private_dir(tmp && *tmp ? tmp : "/tmp");
  }
  try {
    fill(temp_);
  } catch (...) {
    discard();
    throw;
  }
  int err = kind_ == Kind::replace && mode_ >= 0 && ::chmod(temp_.c_str(), static_cast<mode_t>(mode_)) != 0 ? errno : 0;
  if (err == 0) err = sync_file(temp_);
  if (err != 0) {
    discard();
    throw input_error(path_, "", "cannot write: " + errno_text(err));
  }
  staged_ = true;
}

void OutputFile::commit() {
  if (!staged_) throw Error("internal: " + path_ + " committed before it was staged");
  if (committed_) return;
  if (kind_ == Kind::replace) {
    if (::rename(temp_.c_str(), target_.c_str()) != 0) {
      int err = errno;  // before cleanup, which may set errno again
      discard();
      throw input_error(path_, "", "cannot move the finished file into place: " + errno_text(err));
    }
    temp_.clear();
    discard();
    // The rename itself survives a crash only once the folder is on disk.
    int dir = ::open(folder_of(target_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
      ::fsync(dir);
      ::close(dir);
    }
  } else if (kind_ == Kind::stdout_stream) {
    std::cout.flush();
    int err = temp_.empty() ? write_all(STDOUT_FILENO, content_.data(), content_.size()) : copy_into(temp_, STDOUT_FILENO);
    discard();
    if (err != 0) throw Error("cannot write to stdout: " + errno_text(err));
  } else {
    open_stream();
    int fd = fd_;
    fd_ = -1;
    int err = temp_.empty() ? write_all(fd, content_.data(), content_.size()) : copy_into(temp_, fd);
    if (::close(fd) != 0 && err == 0) err = errno;
    discard();
    if (err != 0) throw input_error(path_, "", "write failed: " + errno_text(err));
  }
  content_.clear();
  committed_ = true;
}

void OutputFile::open_stream() {
  if (kind_ != Kind::special_stream || fd_ >= 0) return;
  // No O_CREAT and no O_TRUNC: a device or FIFO is written into as it is; a regular file reached
  // under /dev or /proc (a redirected stdout) is appended to, as the shell opened it.
  fd_ = ::open(target_.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC | O_APPEND);
  if (fd_ < 0) {
    int err = errno;
    discard();
    throw input_error(path_, "", "cannot open for writing: " + errno_text(err));
  }
}

void commit_all(const std::vector<OutputFile*>& outputs) {
  for (auto* o : outputs) o->open_stream();
  for (auto* o : outputs)
    if (!o->streams()) o->commit();
  for (auto* o : outputs)
    if (o->streams()) o->commit();
}

}  // namespace proflint
