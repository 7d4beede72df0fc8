/// Why `uvfetch` could not read its input or create its output; these end the run with `ExitStatus.usage`.
public enum FetchInputError: Error, Equatable, CustomStringConvertible {
    /// The input file could not be opened.
    case unreadable(path: String, reason: String)
    /// The `--out-dir` directory could not be created or written to.
    case unwritable(path: String)
    /// A file to write (`--jsonl`) could not be opened, with open(2)'s reason.
    case cannotCreate(path: String, reason: String)
    /// Standard input can be read once only, so it cannot be repeated.
    case stdinRepeated

    /// The message printed after "uvfetch: ".
    public var description: String {
        switch self {
        case .unreadable(let path, let reason): return "cannot read \(path): \(reason)"
        case .unwritable(let path): return "cannot create \(path)"
        case .cannotCreate(let path, let reason): return "cannot create \(path): \(reason)"
        case .stdinRepeated: return "--repeat needs the URLs again, so it cannot be used with -i -"
        }
    }
}
