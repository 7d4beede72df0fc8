/// Why `uvfetch` could not read its input or create its output; these end the run with `ExitStatus.usage`.
public enum FetchInputError: Error, Equatable, CustomStringConvertible {
    /// The input file could not be opened, or is a directory.
    case unreadable(path: String, reason: String)
    /// The `--out-dir` directory could not be created or written to.
    case unwritable(path: String)
    /// A file to write (`--jsonl`) could not be opened, with open(2)'s reason.
    case cannotCreate(path: String, reason: String)
    /// `--repeat` with input that can be read only once (standard input or another pipe, a
    /// FIFO, a terminal: anything but a regular file); `name` is its path or "standard input".
    case notRepeatable(name: String)
    /// `--resume` cannot continue the `--jsonl` file at `path`: it is standard output, not a
    /// regular file, in use by another run, or has a line that is not a record.
    case notResumable(path: String, reason: String)
    /// `--warc` names an archive an earlier run wrote (a non-empty file, or a file of its
    /// numbered series) and the run was not told to continue it (`--resume`) or add to it
    /// (`--warc-append`): writing would replace what it holds.
    case archiveExists(path: String)
    /// An existing `--warc` file cannot be appended to: it is in use by another run, is not a
    /// WARC file uvfetch can add to, or could not be read or repaired.
    case cannotAppend(path: String, reason: String)

    /// The message printed after "uvfetch: ".
    public var description: String {
        switch self {
        case .unreadable(let path, let reason): return "cannot read \(path): \(reason)"
        case .unwritable(let path): return "cannot create \(path)"
        case .cannotCreate(let path, let reason): return "cannot create \(path): \(reason)"
        case .notRepeatable(let name):
            return "--repeat needs the URLs again, but \(name) is not a regular file and can be read only once: save the list to a file first"
        case .notResumable(let path, let reason): return "cannot resume from \(path): \(reason)"
        case .archiveExists(let path):
            return "\(path) already holds an archive, which this run would replace: --resume continues the run that wrote it, --warc-append adds to it; or name another file"
        case .cannotAppend(let path, let reason): return "cannot append to \(path): \(reason)"
        }
    }
}
