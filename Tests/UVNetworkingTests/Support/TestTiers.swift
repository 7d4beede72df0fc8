import Testing

// The tiers of the test suites: every suite carries exactly one of these tags, naming the most a
// test of it needs; a test that needs more than its suite carries its own. `scripts/run-tests.sh`
// runs each tier in a test process of its own (`make check`: unit and loopback; `make test`:
// all), side by side. Within a process the tests run one at a time, so the leak checks, which
// count the whole process's descriptors, stay exact.
extension Tag {
    /// Pure logic: no socket, no server, no child process.
    @Tag static var unit: Self
    /// Sockets on loopback to servers inside the test process (ScriptedServer,
    /// LoopbackHTTPServer, LoopbackDNSServer), event loops, the worker pool.
    @Tag static var loopback: Self
    /// Real servers in processes of their own: nginx, httpbin, tinyproxy.
    @Tag static var nginx: Self
    /// Runs a program as a child process: uvfetch, the embedding probes, openssl, python3.
    @Tag static var childProcess: Self
    /// Network or mount namespaces (`unshare`, `ip netns`): needs root, skipped without it.
    @Tag static var namespace: Self
    /// A throwaway PostgreSQL cluster (initdb, pg_ctl).
    @Tag static var postgres: Self
    /// Gigabytes through the client or millions of input lines: long, and heavy on the CPU.
    @Tag static var huge: Self
}
