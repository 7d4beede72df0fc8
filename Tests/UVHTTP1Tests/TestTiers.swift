import Testing

// The codec's share of the test tiers (Tests/UVNetworkingTests/Support/TestTiers.swift has them
// all): a tag is known by its name, so the same names here select these suites too.
extension Tag {
    /// Pure logic: no socket, no server, no child process.
    @Tag static var unit: Self
    /// Runs a program as a child process (python3 with h11, for the differential checks).
    @Tag static var childProcess: Self
}
