import Testing

// The queue's share of the test tiers (Tests/UVNetworkingTests/Support/TestTiers.swift has them
// all): a tag is known by its name, so the same name here selects these suites too.
extension Tag {
    /// A throwaway PostgreSQL cluster (initdb, pg_ctl).
    @Tag static var postgres: Self
}
