#pragma once
// Output files that a reader never sees half-written. Each file is written to a temporary file in its own
// folder, flushed to disk (fsync) and only then renamed over its name; a set of files (a run folder's
// summary, trace and timeline) is renamed together once all of them were written, and files of an earlier
// run that this one does not produce are removed at the same moment. Every failing step (no space, no
// permission, a folder that is a file) is an InputError naming the path and the operating system's reason;
// the temporaries of a set that is not committed are removed.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim::sim {

class OutputFiles {
 public:
  OutputFiles() = default;
  ~OutputFiles();  // removes the temporaries of a set that was not committed
  OutputFiles(const OutputFiles&) = delete;
  OutputFiles& operator=(const OutputFiles&) = delete;

  /// Writes `text` to a temporary file beside `path`, flushed to disk; `path` itself is untouched until
  /// commit.
  void stage(const std::filesystem::path& path, std::string_view text);
  /// A temporary path beside `path` for a writer that writes the file itself (with write_file_atomically);
  /// at commit it replaces `path`, or, if nothing was written there, `path` is removed.
  [[nodiscard]] std::filesystem::path stage_path(const std::filesystem::path& path);
  /// `path` is removed at commit: a file of an earlier run that this one does not produce.
  void remove_on_commit(const std::filesystem::path& path);
  /// Renames every staged file over its name and removes the files marked for removal.
  void commit();

 private:
  struct Entry {
    std::filesystem::path temporary;  ///< empty: remove `target`
    std::filesystem::path target;
  };
  std::vector<Entry> entries_;
  bool committed_ = false;
};

/// Writes one file so that it is either complete or absent (a set of one, committed).
void write_file_atomically(const std::filesystem::path& path, std::string_view text);

/// Makes `dir` a folder (creating it and its parents as needed); an InputError naming it and the reason
/// when it exists and is not a folder, or cannot be created.
void ensure_output_folder(const std::filesystem::path& dir);

}  // namespace trainsim::sim
