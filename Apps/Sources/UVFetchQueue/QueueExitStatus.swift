/// The exit codes `uvfetch queue` and `uvfetch worker` add to `ExitStatus`'s.
public enum QueueExitStatus {
    /// The database could not be reached, or refused a statement: sysexits' EX_UNAVAILABLE.
    public static let databaseError: Int32 = 69

    /// The help text's paragraph on the codes these commands add.
    public static let help = "69: the database could not be reached or refused a statement (the message says which)."
}
