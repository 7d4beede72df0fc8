import Foundation
import Testing
@testable import UVNetworking

/// The environment as curl reads it, and which hosts go direct.
@Suite(.tags(.loopback)) struct ProxyConfigurationTests {
    @Test func environmentVariablesAreReadAsCurlReadsThem() {
        let configuration = ProxyConfiguration.environment([
            "http_proxy": "proxy.test:3128", "HTTPS_PROXY": "http://user:p%40ss@secure.test:8443",
            "no_proxy": "internal.test, .corp.test,10.1.2.3",
        ])
        let http = configuration.proxy(forScheme: "http", host: "example.com")
        #expect(http == ProxyEndpoint(host: "proxy.test", port: 3128, authorization: nil))
        let https = configuration.proxy(forScheme: "https", host: "example.com")
        #expect(https?.host == "secure.test")
        #expect(https?.port == 8443)
        #expect(https?.authorization == "Basic " + Data("user:p@ss".utf8).base64EncodedString())
        for direct in ["internal.test", "a.internal.test", "x.corp.test", "corp.test", "10.1.2.3", "localhost", "127.0.0.1", "127.9.9.9", "::1"] {
            #expect(configuration.proxy(forScheme: "http", host: direct) == nil, "\(direct)")
        }
        #expect(configuration.proxy(forScheme: "http", host: "notinternal.test") != nil)
    }

    @Test func uppercaseHTTPProxyIsIgnoredAndAllProxyIsTheFallback() {
        let configuration = ProxyConfiguration.environment(["HTTP_PROXY": "http://evil.test", "ALL_PROXY": "http://all.test:1"])
        #expect(configuration.proxy(forScheme: "http", host: "a.test")?.host == "all.test")
        #expect(configuration.proxy(forScheme: "https", host: "a.test")?.host == "all.test")
        #expect(ProxyConfiguration.environment([:]).proxy(forScheme: "http", host: "a.test") == nil)
        #expect(ProxyConfiguration.environment(["http_proxy": "http://p.test:1", "no_proxy": "*"]).proxy(forScheme: "http", host: "a.test") == nil)
    }

    /// Found by the proxy-env fuzz harness (Fuzz/regressions/proxy-env/trailing-dot-host): a
    /// fully qualified host, "www.example.com.", went through the proxy though no_proxy listed
    /// example.com; curl ignores a trailing dot on the host and on the entry.
    @Test func aTrailingDotOnTheHostOrTheEntryIsIgnored() {
        let configuration = ProxyConfiguration.environment(["http_proxy": "http://p.test:1", "no_proxy": "example.com,corp.test."])
        for direct in ["www.example.com.", "example.com.", "corp.test", "a.corp.test."] {
            #expect(configuration.proxy(forScheme: "http", host: direct) == nil, "\(direct)")
        }
        #expect(configuration.proxy(forScheme: "http", host: "notexample.com.") != nil)
        // An entry that is only dots names nothing.
        let dots = ProxyConfiguration.environment(["http_proxy": "http://p.test:1", "no_proxy": ".,.."])
        #expect(dots.proxy(forScheme: "http", host: "a.test.") != nil)
    }

    /// Found by the proxy-env fuzz harness in a long run (Fuzz/regressions/proxy-env/
    /// bracketed-entry-with-trailing-dot): "[a.]" went through the proxy for host "a", because
    /// the dots were looked at before the brackets came off. Brackets first, then the dot rules.
    @Test func aBracketedEntryFollowsTheDotRulesInside() {
        let configuration = ProxyConfiguration.environment(["http_proxy": "http://p.test:1", "no_proxy": "[a.],[.b.test]"])
        for direct in ["a", "a.", "b.test", "x.b.test"] {
            #expect(configuration.proxy(forScheme: "http", host: direct) == nil, "\(direct)")
        }
        #expect(configuration.proxy(forScheme: "http", host: "ab") != nil)
    }

    @Test func explicitProxiesDoNotSkipLoopback() {
        let configuration = ProxyConfiguration(httpProxy: URL(string: "http://p.test"))
        #expect(configuration.proxy(forScheme: "http", host: "127.0.0.1")?.port == 1080)
        #expect(configuration.proxy(forScheme: "https", host: "127.0.0.1") == nil)
    }
}
