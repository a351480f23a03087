// engine/common/output_file.hpp — the one way proflint writes a file the user named (-o, --db,
// report files). Rules (docs/outputs.md):
//   - "-" is stdout;
//   - a character device, a FIFO, or any path under /dev/ or /proc/ is written into as it is
//     (streamed: never truncated by rename, never replaced);
//   - a regular file or a missing path is replaced atomically: the content goes to a file in a
//     private, freshly created folder (mkdtemp, mode 0700) next to the target, is fsync'ed and
//     renamed over the target, so a reader sees the old file or the new one, never a mix, and
//     two writers end with one complete file;
//   - a symbolic link is followed: the link itself is never replaced; its final target is
//     treated by the rules above (a dangling link is refused);
//   - anything else (a directory, a block device, a socket) is refused with exit 2.
// A command checks its targets before its work (the constructor), stages their content, and
// commits them all only after everything succeeded (commit_all): a failed command leaves none.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace proflint {

class OutputFile {
 public:
  // Checks what is at `path` now; throws proflint::Error (exit 2) for a kind it refuses.
  // `flag` names the option in messages ("--db", "-o").
  explicit OutputFile(std::string path, std::string flag = "");
  ~OutputFile();  // a staged but uncommitted output is discarded
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&&) = delete;

  const std::string& path() const { return path_; }
  bool streams() const { return kind_ != Kind::replace; }

  // Stages the content: written to the temporary file now (fsync'ed) for a replaced target, kept
  // for a streamed one. Nothing is visible at the target before commit().
  void stage(std::string_view content);
  // Stages a file produced by `fill`, which must create the file at the path it is given (the
  // store's VACUUM INTO). The path is inside a private folder, so nothing can be planted there.
  void stage_file(const std::function<void(const std::string& temp_path)>& fill);
  // Moves the staged content into place (rename) or streams it into the special file.
  void commit();
  // Opens a streamed special file for writing (commit_all does it before any rename, so a FIFO
  // or device that cannot be opened fails the command before a file was replaced).
  void open_stream();

 private:
  enum class Kind { stdout_stream, special_stream, replace };
  void make_private_dir(const std::string& folder);
  void discard() noexcept;

  std::string path_;    // as the user gave it (messages)
  std::string flag_;
  Kind kind_ = Kind::replace;
  std::string target_;  // the file that is replaced or written into (a link resolved)
  std::string private_dir_;
  std::string temp_;    // staged file inside private_dir_
  std::string content_; // staged content of a streamed output given as text
  int fd_ = -1;         // an opened special file
  int mode_ = -1;       // permissions of the regular file being replaced (kept), or -1
  bool staged_ = false;
  bool committed_ = false;
};

// Commits every output only after all were staged: the files are renamed one after another with
// nothing else in between, after the streams were opened and before they are written. A failure before this leaves none.
void commit_all(const std::vector<OutputFile*>& outputs);

}  // namespace proflint
