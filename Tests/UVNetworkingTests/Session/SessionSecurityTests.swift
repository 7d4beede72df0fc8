import Testing
@testable import UVNetworking

/// `SessionSecurity`: the binding (policy and TLS context) each https host's requests get.
@Suite(.tags(.unit)) struct SessionSecurityTests {
    /// A crawl over many https hosts: what the session keeps must not grow with every host it
    /// has seen (its pools are dropped when idle; the bindings must not stay behind).
    @Test func hostsWithoutAPolicyOfTheirOwnShareOneBinding() throws {
        var security = SessionSecurity()
        let tls = TLSConfiguration()
        let first = try security.binding(forHost: "a.example", configuration: tls)
        var others = 0
        for index in 0..<10_000 where try security.binding(forHost: "host\(index).example", configuration: tls) !== first {
            others += 1
        }
        #expect(others == 0)
        #expect(security.bindingCount == 1)
    }

    @Test func aHostWithAPolicyOfItsOwnHasItsOwnBinding() throws {
        var security = SessionSecurity()
        let tls = TLSConfiguration()
        security.hostPolicies["pinned.example"] = SecurityPolicy(pinningMode: .certificate)
        security.policiesChanged()
        let shared = try security.binding(forHost: "a.example", configuration: tls)
        let own = try security.binding(forHost: "Pinned.Example", configuration: tls)
        #expect(own !== shared)
        #expect(own.policy == SecurityPolicy(pinningMode: .certificate))
        #expect(shared.policy == SecurityPolicy.default)
        #expect(try security.binding(forHost: "pinned.example", configuration: tls) === own)
        #expect(try security.binding(forHost: "b.example", configuration: tls) === shared)
    }

    @Test func aChangedPolicyGivesNewBindings() throws {
        var security = SessionSecurity()
        let tls = TLSConfiguration()
        let before = try security.binding(forHost: "a.example", configuration: tls)
        security.defaultPolicy = SecurityPolicy(pinningMode: .certificate)
        security.policiesChanged()
        let after = try security.binding(forHost: "a.example", configuration: tls)
        #expect(after !== before)
        #expect(after.policy == SecurityPolicy(pinningMode: .certificate))
        #expect(after.id != before.id)
    }
}
