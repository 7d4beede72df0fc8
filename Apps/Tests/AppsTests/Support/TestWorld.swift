import Foundation

/// The `uvfetch-test-world` executable (Tests/TestWorld): an HTTP server on a given address
/// (`serve`), or a scripted DNS server and an HTTP server around a command (`dns-namespace`).
enum TestWorld {
    /// The executable, `<bin>/uvfetch-test-world`.
    static var executable: URL { builtExecutable("uvfetch-test-world") }
}
