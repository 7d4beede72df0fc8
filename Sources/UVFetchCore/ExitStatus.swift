/// `uvfetch`'s exit codes, listed in `--help` and the README.
public enum ExitStatus {
    /// Every URL answered 2xx.
    public static let success: Int32 = 0
    /// At least one URL failed (error or non-2xx) or an input line was malformed.
    public static let someFailed: Int32 = 1
    /// Bad options or unreadable input; the same code (EX_USAGE) ArgumentParser uses for its own
    /// validation errors, so every usage problem exits alike.
    public static let usage: Int32 = 64
    /// Interrupted by ^C (SIGINT) after printing the summary so far: 128 + SIGINT, what a shell
    /// reports for a command the signal ended.
    public static let interrupted: Int32 = 130

    /// The help text's paragraph on exit codes.
    public static let help = "Exit status: 0 all URLs succeeded, 1 some failed or were malformed, 64 usage error or unreadable input, 130 interrupted (^C, after the summary so far)."
}
