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

    /// The message printed after "uvfetch: ".
    public var description: String {
        switch self {
        case .unreadable(let path, let reason): return "cannot read \(path): \(reason)"
        case .unwritable(let path): return "cannot create \(path)"
        case .cannotCreate(let path, let reason): return "cannot create \(path): \(reason)"
        case .notRepeatable(let name):
            return "--repeat needs the URLs again, but \(name) is not a regular file and can be read only once: save the list to a file first"
        case .notResumable(let path, let reason): return "cannot resume from \(path): \(reason)"
        }
    }
}
