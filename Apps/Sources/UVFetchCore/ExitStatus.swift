/// `uvfetch`'s exit codes, listed in `--help` and the README.
public enum ExitStatus {
    /// Every URL answered 2xx.
    public static let success: Int32 = 0
    /// At least one URL failed (error or non-2xx) or an input line was malformed.
    public static let someFailed: Int32 = 1
    /// Writing a record, a line or the summary failed (a full disk, `/dev/full`, a closed pipe
    /// when SIGPIPE is ignored): curl's code for a write error. The run stops at once; what was
    /// written before is complete lines.
    public static let writeError: Int32 = 23
    /// Bad options or unreadable input; the same code (EX_USAGE) ArgumentParser uses for its own
    /// validation errors, so every usage problem exits alike.
    public static let usage: Int32 = 64
    /// Interrupted by ^C (SIGINT) after printing the summary so far: 128 + SIGINT, what a shell
    /// reports for a command the signal ended.
    public static let interrupted: Int32 = 130
    /// Stopped by SIGTERM after printing the summary so far: 128 + SIGTERM.
    public static let terminated: Int32 = 143

    /// The help text's paragraph on exit codes.
    public static let help = "Exit status: 0 all URLs succeeded, 1 some failed or were malformed, 23 write error (output, --jsonl, --warc), 64 usage error or unreadable input, 130 interrupted (^C), 143 terminated (SIGTERM); after 23, 130 and 143 the summary so far is on stderr."
}
