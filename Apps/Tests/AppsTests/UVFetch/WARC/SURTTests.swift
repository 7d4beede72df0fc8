import Foundation
import Testing
@testable import UVFetchCore

/// The CDXJ sort key against the rules the `surt` package applies by default, and against the
/// package itself (PyPI, installed with cdxj-indexer by scripts/install-deps.sh) on the same URLs.
@Suite(.tags(.unit)) struct SURTTests {
    static let cases: [(url: String, key: String)] = [
        ("http://127.0.0.1:18556/a", "1,0,0,127:18556)/a"),
        ("http://www.Example.COM/Path/To?b=2&a=1#frag", "com,example)/path/to?a=1&b=2"),
        ("https://example.com:443/", "com,example)/"),
        ("http://example.com:80/x?", "com,example)/x"),
        ("http://[::1]:8080/a", "::1:8080)/a"),
        ("http://example.com/a%2Fb%20c?q=%41", "com,example)/a/b%20c?q=a"),
        ("http://www2.example.com/", "com,example)/"),
        ("http://example.com", "com,example)/"),
        ("http://Ex.com/A/B?Z=1&a=2&a=1", "com,ex)/a/b?a=1&a=2&z=1"),
        ("http://example.com/%7Euser", "com,example)/~user"),
        ("http://a.com/%2541", "com,a)/a"),
        ("http://a.com/x%", "com,a)/x%25"),
        ("http://a.com?x=1", "com,a)/?x=1"),
        ("http://u:p@a.com:80/", "com,a)/"),
        ("http://a.com/p?a=1&&b=2", "com,a)/p?&a=1&b=2"),
        ("http://a.com./p", "com,a)/p"),
        ("http://A.com/%c3%a9", "com,a)/%c3%a9"),
        ("http://wwwx.a.com/", "com,a,wwwx)/"),
    ]

    @Test func theSURTPackagesDefaults() {
        for (url, key) in Self.cases { #expect(SURT.key(url) == key, "\(url)") }
    }

    /// The same URLs, and a few hundred generated ones, keyed by the package itself.
    @Test func agreesWithTheSURTPackage() throws {
        var urls = Self.cases.map(\.url)
        var random = SplitMix64(seed: 9309)
        let pieces = ["a", "B", "%41", "%2f", "%25", "~", "%7e", "é", "%c3%a9", "x=1", "y=2", "&", "?", "/", ".", ";", "=", "%20", "+"]
        let hosts = ["127.0.0.1:8080", "www.Example.org", "[::1]:9", "a.b.c.example", "EXAMPLE.com:443", "www3.x.test:80"]
        for _ in 0..<300 {
            var path = "/"
            for _ in 0..<(random.next() % 8) { path += pieces[Int(random.next() % UInt64(pieces.count))] }
            let scheme = random.next() % 2 == 0 ? "http" : "https"
            let host = hosts[Int(random.next() % UInt64(hosts.count))]
            if let url = URL(string: "\(scheme)://\(host)\(path.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? path)") {
                urls.append(url.absoluteString)
            }
        }
        let script = "import sys, json\nfrom surt import surt\nprint(json.dumps([surt(u) for u in json.load(sys.stdin)]))"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        try input.fileHandleForWriting.write(contentsOf: JSONEncoder().encode(urls))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "python3 cannot import surt: run scripts/install-deps.sh (it installs cdxj-indexer)")
        let theirs = try JSONDecoder().decode([String].self, from: data)
        for (url, key) in zip(urls, theirs) { #expect(SURT.key(url) == key, "\(url)") }
    }
}
